"""Masking is not undone by control characters: a token wrapped in a
colour code, or cut by a DEL, BS, CR, C1, escape sequence, bidi or zero-width character
is masked on every surface an agent is served; PEM keys behind ``# ``/``* ``/``| ``,
encrypted PEM, and a token as a file name or a ``###`` heading too; lint flags each."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.mcp_harness import connect
from vaultkeeper.cli import cli
from vaultkeeper.lint import lint_vault
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.recall.start import render
from vaultkeeper.search.rank import Searcher
from vaultkeeper.store import secrets

TOKEN = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
CUT = {
    "colour": f"\x1b[31m{TOKEN}\x1b[0m",
    "del": f"{TOKEN[:10]}\x7f{TOKEN[10:]}",
    "bs": f"{TOKEN[:10]}\x08{TOKEN[10:]}",
    "cr": f"{TOKEN[:10]}\r{TOKEN[10:]}",
    "c1": f"{TOKEN[:10]}\x9b{TOKEN[10:]}",
    "nel": f"{TOKEN[:10]}\x85{TOKEN[10:]}",
    "sequence": f"{TOKEN[:10]}\x1b[0m{TOKEN[10:]}",
    "bare-csi": f"{TOKEN[:4]}\x1b[{TOKEN[4:]}",
    "osc": f"{TOKEN[:10]}\x1b]0;title\x07{TOKEN[10:]}",
    "bidi": f"{TOKEN[:10]}\u202e{TOKEN[10:]}",
    "isolate": f"{TOKEN[:10]}\u2066{TOKEN[10:]}",
    "zero-width": f"{TOKEN[:10]}\u200b{TOKEN[10:]}",
    # the controls str.splitlines breaks a line at (issue 32 item 4)
    "vt": f"{TOKEN[:10]}\x0b{TOKEN[10:]}",
    "ff": f"{TOKEN[:10]}\x0c{TOKEN[10:]}",
    "fs": f"{TOKEN[:10]}\x1c{TOKEN[10:]}",
    "gs": f"{TOKEN[:10]}\x1d{TOKEN[10:]}",
    "rs": f"{TOKEN[:10]}\x1e{TOKEN[10:]}",
    "line-separator": f"{TOKEN[:10]}\u2028{TOKEN[10:]}",
    "paragraph-separator": f"{TOKEN[:10]}\u2029{TOKEN[10:]}",
}
# a token glued to a word by a colour code or a DEL (issue 32 item 5): the removed
# control stood between the word and the token, so it still bounds the token
GLUED = {
    "glued-colour": f"see\x1b[0m{TOKEN}",
    "glued-del": f"x\x7f{TOKEN}",
    "glued-both-sides": f"see\x1b[0m{TOKEN}\x1b[0mthen",
    "glued-bidi": f"see\u202e{TOKEN}",
    "glued-zero-width": f"see\u200b{TOKEN}\u200bthen",
    "glued-nel": f"see\x85{TOKEN}",
}
CUT.update(GLUED)
BODY = "MIIEpAIBAAKCAQEA7bq9zRw3hL0xYkQ2mVn8uT5pJsXcGfDeHiKlMnOpQrStUvWx"
KEYS = {
    f"{mark.strip()}-prefixed": (
        f"{mark}-----BEGIN RSA PRIVATE KEY-----\n{mark}{BODY}\n{mark}{BODY[::-1]}\n"
        f"{mark}-----END RSA PRIVATE KEY-----\n"
    )
    for mark in ("# ", "* ", "| ")
}
KEYS["encrypted"] = (
    "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
    "DEK-Info: AES-128-CBC,3F17F5316E2BAC89BC3F17F5316E2BAC\n\n"
    f"{BODY}\n{BODY[::-1]}\n-----END RSA PRIVATE KEY-----\n"
)
KEYS["encrypted, END cut off"] = KEYS["encrypted"].rsplit("-----END", 1)[0]
M = "projects/api/memory"


def visible(text: str) -> str:
    """What an agent or a terminal makes of ``text``: control characters dropped."""
    return "".join(c for c in text if c.isprintable() or c in "\n\t")


def leaked(text: str) -> bool:
    shown = visible(text)
    return TOKEN in shown or BODY in shown or BODY[::-1] in shown


def note(description: str, body: str) -> str:
    return (
        f'---\nname: leaky\ndescription: "{description}"\ntype: memory\nstatus: active\n'
        f"label: fact\n---\n\nThe deploy step uses {body} today.\n"
    )


@pytest.mark.parametrize("name", sorted(CUT))
def test_served_masks_a_token_cut_by_a_control_character(name: str) -> None:
    out = secrets.served(f"deploy {CUT[name]} today\n")
    if name in GLUED:  # the word it was glued to stays
        assert "[redacted: github token]" in out and not leaked(out), out
    else:
        assert out == "deploy [redacted: github token] today\n"
    hit = secrets.find(f"line one\nx {CUT[name]}")
    assert [(h.kind, h.line) for h in hit] == [("github token", 2)]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_served_masks_prefixed_and_encrypted_private_keys(name: str) -> None:
    text = f"before\n{KEYS[name]}after\n"
    out = secrets.served(text)
    assert not leaked(out) and "[redacted: private key]" in out, out
    assert out.count("\n") == text.count("\n")  # line numbers still hold
    assert [h.kind for h in secrets.find(text)] == ["private key"]


def escaped(value: str) -> str:
    """``value`` as a YAML double-quoted scalar holds it."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in value)


@pytest.fixture(params=sorted(CUT))
def cut_vault(request: pytest.FixtureRequest, make_vault: MakeVault) -> Path:
    value = CUT[request.param]
    return make_vault({f"{M}/leaky.md": note(f"Deploy with {escaped(value)} then", value)})


def test_every_surface_masks_a_cut_token(cut_vault: Path, runner: CliRunner) -> None:
    vault = cut_vault
    tools = VaultTools(vault, lambda: NOW, "evasion-test")
    surfaces = {
        "read": tools.read(f"{M}/leaky.md")["text"],
        "search": repr(tools.search("deploy", project="api")),
        "recall": repr(tools.recall(project="api")),
        "session-start": render(vault, None, NOW, vault / "projects" / "api"),
        "searcher": repr(Searcher(vault).search("deploy", project="api")),
    }
    index = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert index.exit_code == 0, index.output
    surfaces["_index.md"] = (vault / "_index.md").read_text()
    scan = runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert scan.exit_code == 0, scan.output
    brief = runner.invoke(cli, ["--vault", str(vault), "report", "--brief"])
    assert brief.exit_code == 0, brief.output
    surfaces["report --brief"] = brief.output
    for where, text in surfaces.items():
        assert not leaked(text), (where, text)
    assert "[redacted: github token]" in surfaces["read"]
    glued = next(
        (w for w in ("see", "x") if f"Deploy with {w}[redacted" in surfaces["_index.md"]), ""
    )
    assert f"Deploy with {glued}[redacted: github token]" in surfaces["_index.md"]
    assert "[redacted: github token]" in surfaces["session-start"]
    codes = [f.code for f in lint_vault(vault, select=["VK5"]).findings]
    assert codes[-1:] == ["VK502"]  # the body's line, at least


def test_resources_mask_cut_tokens_over_stdio(make_vault: MakeVault, tmp_path: Path) -> None:
    body = " ".join(CUT.values())
    vault = make_vault({f"{M}/leaky.md": note("plain", body)})
    index = vault / "_index.md"
    index.write_text(index.read_text() + f"\nA person's note: {CUT['colour']} {CUT['del']}\n")

    async def main() -> None:
        async with connect(vault, tmp_path / "home") as s:
            entry = (await s.read_resource(f"vault://entry/{M}/leaky.md")).contents[0].text
            whole = (await s.read_resource("vault://index")).contents[0].text
            for text in (entry, whole):
                assert not leaked(text) and "[redacted: github token]" in text, text

    anyio.run(main)


def test_a_token_as_a_file_name_or_heading_never_reaches_index_links(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    registry = (
        "# Registry\n\n"
        f"### {TOKEN}\n\nDeploy pattern.\n\n**success count:** 1\n**last used:** 2026-11-01\n"
    )
    vault = make_vault(
        {
            f"{M}/{TOKEN}.md": note("named after a token", "nothing"),
            "patterns/registry.md": registry,
        }
    )
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    text = (vault / "_index.md").read_text()
    assert TOKEN not in text
    assert f"- {M}/[redacted: github token] (its name holds a credential" in text
    findings = lint_vault(vault, select=["VK5"]).findings
    assert sorted(f.code for f in findings) == ["VK502", "VK502"]  # the name, the heading
    assert all(TOKEN not in f.path for f in findings)


BREAKS = ("vt", "ff", "fs", "gs", "rs", "nel", "line-separator", "paragraph-separator")


@pytest.mark.parametrize("name", BREAKS)
def test_search_cuts_lines_only_after_masking_the_whole_body(
    name: str, make_vault: MakeVault
) -> None:
    """A control that ``str.splitlines`` breaks a line at, inside a token: the hit shows
    the masked token, never its second half, and its line number is the file's."""
    body = f"Line one.\nThe deploy step uses {CUT[name]} today.\nThe zebra line.\n"
    vault = make_vault({f"{M}/leaky.md": note("plain", body)})
    text = (vault / M / "leaky.md").read_text()
    for query, want in (("today", "The deploy step"), ("zebra", "The zebra line")):
        hits = Searcher(vault).search(query, project="api")
        assert [h.path for h in hits] == [f"{M}/leaky.md"], (query, hits)
        hit = hits[0]
        assert text.split("\n")[hit.line - 1].startswith(want), (query, hit.line)
        assert TOKEN[10:] not in hit.snippet and TOKEN[:10] not in hit.snippet, hit.snippet
        if query == "today":
            assert "[redacted: github token] today" in hit.snippet, hit.snippet
