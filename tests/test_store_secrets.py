"""vaultkeeper.store.secrets: every planted credential found and masked; prose and placeholders not.

The tokens below are made up (random characters in each provider's shape); none was
ever issued.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import corpus
from vaultkeeper.store import secrets
from vaultkeeper.store.model import decode, read_regular
from vaultkeeper.store.vault import iter_files

_B64 = "+Ydua+5ZMs1SWOpQaPRYpzbLGViYXjU2JgJngKtFI3OyV2dZAkg05rK+gqv81RKM"
_PEM_BODY = f"{_B64}\n{_B64[:40]}\n"

# (kind, the line or lines as a note would hold them, the credential's value)
PLANTED: tuple[tuple[str, str, str], ...] = (
    (
        "private key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}-----END RSA PRIVATE KEY-----",
        _B64,
    ),
    (
        "private key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{_PEM_BODY}-----END OPENSSH PRIVATE KEY-----",
        _B64,
    ),
    ("private key", f"-----BEGIN PRIVATE KEY-----\n{_PEM_BODY}", _B64),  # END cut off
    (
        "private key",
        f'key = "-----BEGIN PRIVATE KEY-----\\n{_B64}\\n-----END PRIVATE KEY-----"',
        _B64,
    ),
    ("aws access key", "aws_access_key_id = AKIAXBENYJQWX4HH5344", "AKIAXBENYJQWX4HH5344"),
    ("aws access key", "The session key was ASIATFJGVQ4K7BN7XJ8B.", "ASIATFJGVQ4K7BN7XJ8B"),
    (
        "github token",
        "export GITHUB_TOKEN=ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
        "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
    ),
    (
        "github token",
        "oauth: gho_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR",
        "gho_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR",
    ),
    (
        "github token",
        "- user-to-server ghu_IBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7 (expires)",
        "ghu_IBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7",
    ),
    (
        "github token",
        "`ghs_FAc9QeWJKY40uvSwMFLZDe1f8rESQedUStPK`",
        "ghs_FAc9QeWJKY40uvSwMFLZDe1f8rESQedUStPK",
    ),
    (
        "github token",
        "refresh=ghr_R0CsTy4Qwb8DwkNhFdnXsiVpzz63FfkCzJr4",
        "ghr_R0CsTy4Qwb8DwkNhFdnXsiVpzz63FfkCzJr4",
    ),
    (
        "github token",
        "PAT github_pat_i0B3JrTAwR4y9ojfljoQoa_F1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJ"
        "zzzzgEOzdmenCkhvMdgaKjIg8",
        "github_pat_i0B3JrTAwR4y9ojfljoQoa_F1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzdmenCk"
        "hvMdgaKjIg8",
    ),
    (
        "openai key",
        "OPENAI_API_KEY=sk-proj-MlHUvTCQCyEZDz-TddJ8HyS5SUkCnD8zRA9a9SkpXz9w3QlY",
        "sk-proj-MlHUvTCQCyEZDz-TddJ8HyS5SUkCnD8zRA9a9SkpXz9w3QlY",
    ),
    (
        "openai key",
        "service account: sk-svcacct-DzV8fUkkibjL5DZPjN0MEQ7wjJJibaZUPgHV7iB3",
        "sk-svcacct-DzV8fUkkibjL5DZPjN0MEQ7wjJJibaZUPgHV7iB3",
    ),
    (
        "openai key",
        'client = OpenAI(api_key="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")',
        "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",
    ),
    (
        "anthropic key",
        "ANTHROPIC_API_KEY: sk-ant-api03-4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY"
        "_uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2HZt-PlJAA",
        "sk-ant-api03-4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY_uCu3ZR1zTOlUcR64cXQ"
        "LioDnkHIfxIq2HZt-PlJAA",
    ),
    (
        "anthropic key",
        "admin key sk-ant-admin01-dZSlB5er8bOfZqfM2oeq3hDavJA76rNicHTp8hkqdlm7tOtHWnsCGRlrwZbq",
        "sk-ant-admin01-dZSlB5er8bOfZqfM2oeq3hDavJA76rNicHTp8hkqdlm7tOtHWnsCGRlrwZbq",
    ),
    (
        "slack token",
        "bot: xoxb-000883873716-7868433532650-1iaeOV4qBkdfQ1y3GQsMpSsc",
        "xoxb-000883873716-7868433532650-1iaeOV4qBkdfQ1y3GQsMpSsc",
    ),
    (
        "slack token",
        "xoxp-722470455853-043520561748-3380141269060-331ce649e3eb7ea1cabe5d68ba192a8c",
        "xoxp-722470455853-043520561748-3380141269060-331ce649e3eb7ea1cabe5d68ba192a8c",
    ),
    (
        "slack token",
        "| app | xoxa-2-V7G5IfQHeVVEqZe2qpUWnoVPDF2yeE |",
        "xoxa-2-V7G5IfQHeVVEqZe2qpUWnoVPDF2yeE",
    ),
    (
        "slack token",
        "refresh xoxr-6RsXcNOPmeMjvqPVStNKiaEdFrRgSnRFsTHsDDDX",
        "xoxr-6RsXcNOPmeMjvqPVStNKiaEdFrRgSnRFsTHsDDDX",
    ),
    (
        "slack token",
        "xoxs-183417047187-ryn687neLfjVHq8xiM0OGr4hTxoF54",
        "xoxs-183417047187-ryn687neLfjVHq8xiM0OGr4hTxoF54",
    ),
    ("password", "password = hunter2!Q", "hunter2!Q"),
    ("password", "DB_PASSWORD: 'p4ssw0rd-Prod-7'", "p4ssw0rd-Prod-7"),
    ("password", '{"passwd": "Zq8#rT1vLp"}', "Zq8#rT1vLp"),
    ("secret", "client_secret: 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c"),
    (
        "secret",
        "AWS_SECRET_ACCESS_KEY=GHZEM9YpvujA/C5Q52ryFlwRlOEVHzc0X0AWIRh/",
        "GHZEM9YpvujA/C5Q52ryFlwRlOEVHzc0X0AWIRh/",
    ),
    ("token", "access_token = ya29.a0AfH6SMBx3vQ9kL2", "ya29.a0AfH6SMBx3vQ9kL2"),
    ("api key", "**api_key:** 4e5f6a7b8c9d0e1f2a3b", "4e5f6a7b8c9d0e1f2a3b"),
    ("api key", "stripeApiKey: rk_live_51Hx9qAZ2b7", "rk_live_51Hx9qAZ2b7"),
)

PROSE = (
    "Rotate the token: see the runbook before the release.",
    "password: <your password>",
    "api_key = ${API_KEY}",
    "token: YOUR_TOKEN_HERE",
    "max_tokens = 4096",
    "password_min_length: 12",
    "secret: hidden",
    "api_key: your-api-key",
    "The AWS docs use AKIAIOSFODNN7EXAMPLE as their example key.",
    "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    "secret = settings.SECRET_KEY",
    "token = os.environ['GITHUB_TOKEN']",
    "GITHUB_TOKEN: GITHUB_TOKEN",
    "tokenizer: bert-base-uncased",
    "The session token expires after 30 minutes; refresh it with the CLI.",
    "Use `sk-learn` (scikit-learn) for the baseline model.",
    "password: correct horse battery staple",
    "Commit abc123: token refresh now retries once.",
    "sha256 AKIAXBENYJQWX4HH5344FFAA0011 of the artifact",
)


@pytest.mark.parametrize(("kind", "text", "value"), PLANTED, ids=[p[0] for p in PLANTED])
def test_every_planted_credential_is_found_and_masked(kind: str, text: str, value: str) -> None:
    note = f"# notes\n\nsome text\n{text}\nmore text\n"
    hits = secrets.find(note)
    assert [h.kind for h in hits] == [kind]
    assert hits[0].line == 4
    masked = secrets.mask(note)
    assert value not in masked
    assert f"[redacted: {kind}]" in masked
    assert masked.startswith("# notes\n\nsome text\n") and masked.endswith("\nmore text\n")


def test_thirty_planted_in_one_file_thirty_found() -> None:
    assert len(PLANTED) == 30
    text = "\n\n".join(p[1] for p in PLANTED) + "\n"
    assert [h.kind for h in secrets.find(text)] == [p[0] for p in PLANTED]
    masked = secrets.mask(text)
    for _, _, value in PLANTED:
        assert value not in masked


@pytest.mark.parametrize("text", PROSE)
def test_prose_and_placeholders_are_not_credentials(text: str) -> None:
    assert secrets.find(text) == []
    assert secrets.mask(text) == text


def test_the_name_stays_and_only_the_value_goes() -> None:
    assert secrets.mask("db_password = hunter2!Q # prod") == (
        "db_password = [redacted: password] # prod"
    )


def test_strip_controls_removes_escape_sequences_and_keeps_tabs_and_newlines() -> None:
    text = "a\x1b[31mred\x1b[0m\tb\r\nc\x07\x1b]0;title\x07d\x9b2Je\x00f\n"
    assert secrets.strip_controls(text) == "ared\tb\nc" + "def\n"
    assert secrets.served("x\x1b[2Jtoken = a1b2c3d4e5f6\n") == "xtoken = [redacted: token]\n"


@given(st.text())
def test_served_text_has_no_control_characters(text: str) -> None:
    out = secrets.served(text)
    assert not any((ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F for c in out)


@pytest.mark.corpora
def test_nothing_found_in_the_kepano_obsidian_corpus() -> None:
    root = corpus()
    checked = 0
    for path in iter_files(root):
        try:
            text = decode(read_regular(path))
        except ValueError:
            continue  # an image or other binary file
        checked += 1
        assert secrets.find(text) == [], path
    assert checked > 50


@given(st.text())
def test_needs_serving_never_misses(text: str) -> None:
    if not secrets.needs_serving(text):
        assert secrets.served(text) == text


@pytest.mark.parametrize(("kind", "text", "value"), PLANTED, ids=[p[0] for p in PLANTED])
def test_needs_serving_sees_every_planted_credential(kind: str, text: str, value: str) -> None:
    assert secrets.needs_serving(f"projects/p/memory/x.md {text} rule")


_NAMES = [
    "password", "Passwd", "PWD", "db_password", "secret", "SECRET_ACCESS_KEY", "token",
    "GITHUB_TOKEN", "api_key", "apiKey", "private-key", "monkey", "tokens", "\u212aey",
]  # fmt: skip
_NOISE = ["", " ", "x", "cache-key-b12 ", "\n", "see: ", "sk-", "ghp_", "**"]
_VALUES = ["hunter2XY9", "A1b2C3d4E5f6", "example", "${TOKEN}", "abc", "xoxb-1234567890ab"]
_assignments = st.tuples(
    st.sampled_from(_NOISE),
    st.sampled_from(_NAMES),
    st.sampled_from(["", "s", "S"]),
    st.sampled_from(["", '"', "'"]),
    st.sampled_from(["", " ", "\t", " ** "]),
    st.sampled_from([":", "=", "-", " "]),
    st.sampled_from(["", " ", "** "]),
    st.sampled_from(["", '"', "`"]),
    st.sampled_from(_VALUES),
    st.sampled_from(_NOISE),
).map("".join)


@given(_assignments)
def test_the_quick_no_never_hides_a_credential(text: str) -> None:
    """needs_serving and mask skip text _maybe says no to: it must say yes wherever find
    sees a credential (a report is checked whole, so this is what keeps it masked)."""
    if secrets.find(text):
        assert secrets.needs_serving(text)
        assert secrets.mask(text) != text


def test_a_name_with_key_in_it_is_not_a_credential_start() -> None:
    lines = "prune     cache-key-b12 -- success count 0 -- patterns/registry.md:30"
    assert not secrets.needs_serving(lines)
    assert secrets.needs_serving("cache_key: abc123XYZ9")


@pytest.mark.parametrize(
    "text", ["\u0130 pa\u017fsword = hunter2x9", "\u0130 \u017fecret: abc123def"]
)
def test_the_quick_no_sees_what_find_sees_with_a_long_s(text: str) -> None:
    """find falls back to the whole regex when lower() changes the text's length (a
    dotted capital I), and the regex's IGNORECASE matches a long s as an s; the quick
    no looks for the words in text.lower(), where the long s stays itself."""
    assert secrets.find(text)
    assert secrets.needs_serving(text)
    assert "hunter2x9" not in secrets.served(text) and "abc123def" not in secrets.served(text)
