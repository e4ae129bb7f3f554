"""Everything served to an agent -- the MCP ``read`` tool and resources, ``search``,
the brief and ``_index.md`` -- masks credentials and strips control characters; ``new``
refuses control characters; a list-form ``superseded_by`` and a file symlinked out of
the vault are never served as live entries."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from tests.mcp_harness import connect
from vaultkeeper.cli import cli
from vaultkeeper.errors import UsageError
from vaultkeeper.lint import lint_vault
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.recall.start import render
from vaultkeeper.search.rank import Searcher

TOKEN = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
ESC = "\x1b[2J\x1b]0;pwned\x07"
KEY_BODY = "MIIEpAIBAAKCAQEA7bq9zRw3hL0xYkQ2mVn8uT5pJsXcGfDeHiKlMnOpQrStUvWx"
KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    f"{KEY_BODY}\n"
    "Zy1a2b3c4d5e6f7g8h9i0jKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv\n"
    "-----END RSA PRIVATE KEY-----\n"
)
LEAKY = (
    "---\n"
    "name: leaky\n"
    f'description: "Deploy with {TOKEN} then\\e[2J clear\\a"\n'
    "type: memory\nstatus: active\nlabel: fact\n"
    "---\n\n"
    f"The deploy step{ESC} uses {TOKEN} today.\n"
    "Rotation key below:\n"
    f"{KEY}"
    "After the key: the rotation note ends here.\n"
)
M = "projects/api/memory"


def leaky_vault(make_vault: MakeVault) -> Path:
    return make_vault({f"{M}/leaky.md": LEAKY})


def tools(vault: Path) -> VaultTools:
    return VaultTools(vault, lambda: NOW, "served-test")


def clean(text: str) -> None:
    assert TOKEN not in text and KEY_BODY not in text
    assert not any(c in text for c in "\x1b\x07\x7f\x9b"), repr(text)


def test_read_tool_masks_credentials_strips_controls_and_keeps_line_numbers(
    make_vault: MakeVault,
) -> None:
    vault = leaky_vault(make_vault)
    out = tools(vault).read(f"{M}/leaky.md")
    clean(out["text"])
    assert "uses [redacted: github token] today." in out["text"]
    assert "[redacted: private key]" in out["text"]
    # a masked key block keeps its lines: the line numbers search gives still hold
    lines = out["text"].split("\n")
    assert out["lines"] == LEAKY.count("\n") == len(lines) - 1
    assert lines[LEAKY.split("\n").index("After the key: the rotation note ends here.")] == (
        "After the key: the rotation note ends here."
    )


def test_search_masks_names_descriptions_and_snippets(make_vault: MakeVault) -> None:
    vault = leaky_vault(make_vault)
    searcher = Searcher(vault)
    # a body line, the description, a line inside the key block (masked as a whole;
    # the index holds whole words: the line's words, not a part of one)
    for query in ("deploy today", "clear", KEY_BODY):
        hits = searcher.search(query, project="api")
        assert [h.name for h in hits] == ["leaky"], query
        hit = hits[0]
        for value in (hit.name, hit.description, hit.snippet, hit.path, hit.cite, hit.link):
            clean(value)
            assert "\\u001b" not in value and "\\u0007" not in value
        assert "[redacted: github token]" in hit.description
    snippet = searcher.search("deploy today", project="api")[0].snippet
    assert snippet == "The deploy step uses [redacted: github token] today."
    inside = searcher.search(KEY_BODY, project="api")[0]
    assert inside.snippet == ""  # the line lies inside the masked block, kept blank
    assert inside.line == LEAKY.split("\n").index(KEY_BODY) + 1
    result = tools(vault).search("deploy", project="api")
    assert "[redacted: github token]" in result["hits"][0]["description"]


def test_resources_serve_masked_text_over_stdio(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = leaky_vault(make_vault)
    index = vault / "_index.md"
    index.write_text(index.read_text() + f"\nA person's note: {TOKEN}\x1b[31m red\n")

    async def main() -> None:
        async with connect(vault, tmp_path / "home") as s:
            entry = await s.read_resource(f"vault://entry/{M}/leaky.md")
            text = entry.contents[0].text
            clean(text)
            assert "uses [redacted: github token] today." in text
            whole = (await s.read_resource("vault://index")).contents[0].text
            clean(whole)
            assert "A person's note: [redacted: github token] red" in whole

    anyio.run(main)


def test_index_lines_mask_and_strip_descriptions(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = leaky_vault(make_vault)
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    text = (vault / "_index.md").read_text()
    clean(text)
    line = f"- [[{M}/leaky]] - Deploy with [redacted: github token] then clear"
    assert line in text.splitlines()
    check = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert check.exit_code == 0, check.output


def test_brief_skips_a_file_symlinked_out_of_the_vault(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = leaky_vault(make_vault)
    outside = tmp_path / "outside.md"
    outside.write_text(
        "---\nname: outsider\ndescription: read from outside the vault\nstatus: active\n---\n"
    )
    (vault / M / "outsider.md").symlink_to(outside)
    inside = vault / "references" / "target.md"
    inside.write_text("---\nname: insider\ndescription: a link kept inside\nstatus: active\n---\n")
    (vault / M / "insider.md").symlink_to(inside)
    brief = render(vault, None, NOW, vault / "projects" / "api")
    assert "outsider" not in brief and "outside the vault" not in brief
    assert "- insider: a link kept inside" in brief
    clean(brief)
    assert "- leaky: Deploy with [redacted: github token] then" in brief
    hits = Searcher(vault).search("outside vault", project="api")
    assert [h.path for h in hits] == []
    assert [h.path for h in Searcher(vault).search("kept inside")] == [
        f"{M}/insider.md",
        "references/target.md",
    ]  # a link kept inside the vault is an entry as any other


def superseded(keys: str) -> str:
    return (
        f"---\nname: old\ndescription: webpack config old way\ntype: memory\nstatus: active\n"
        f"label: fact\n{keys}---\n\nUse webpack.\n"
    )


NEW = "---\nname: new\ndescription: vite config new way\ntype: memory\nstatus: active\n---\n"


@pytest.mark.parametrize(
    "keys",
    [
        f'superseded_by: ["[[{M}/new]]"]\n',
        f"superseded_by:\n  - {M}/new\n",
    ],
)
def test_superseded_by_as_a_one_element_list_is_not_served(
    make_vault: MakeVault, keys: str
) -> None:
    vault = make_vault({f"{M}/old.md": superseded(keys), f"{M}/new.md": NEW})
    searcher = Searcher(vault)
    assert [h.name for h in searcher.search("config way", project="api")] == ["new"]
    everything = searcher.search("config way", project="api", include_archived=True)
    assert [(h.name, h.superseded_by) for h in everything] == [
        ("new", None),
        ("old", f"{M}/new"),
    ]
    brief = render(vault, None, NOW, vault / "projects" / "api")
    assert "- new: vite config" in brief and "webpack" not in brief
    # lint reads it as the string form: a list pointing at nothing is VK602
    assert [f.code for f in lint_vault(vault, select=["VK6"]).findings] == []
    (vault / M / "new.md").unlink()
    assert [f.code for f in lint_vault(vault, select=["VK6"]).findings] == ["VK602"]


@pytest.mark.parametrize(
    ("args", "char"),
    [
        (["-d", "Deploy \x1b[2J then"], "U+001B"),
        (["-d", "Ring\x07 the bell"], "U+0007"),
        (["-d", "Delete\x7f this"], "U+007F"),
        (["-d", "Fine", "--falsify", "breaks\x1b]0;x\x07"], "U+001B"),
    ],
)
def test_new_refuses_control_characters_and_writes_nothing(
    make_vault: MakeVault, runner: CliRunner, args: list[str], char: str
) -> None:
    vault = make_vault()
    before = snapshot(vault)
    for kind in ("memory", "pattern"):
        extra = ["-p", "api"] if kind == "memory" else []
        if kind == "pattern" and "--falsify" in args:
            continue
        result = runner.invoke(cli, ["--vault", str(vault), "new", kind, "x", *extra, *args])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and f"control character {char} at column" in lines[0]
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert snapshot(vault) == before


def test_new_refuses_a_name_ending_in_a_line_break(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault()
    before = snapshot(vault)
    for kind in ("memory", "pattern"):
        result = runner.invoke(
            cli, ["--vault", str(vault), "new", kind, "x\n", "-p", "api", "-d", "D"]
        )
        assert result.exit_code == 2, result.output
        assert len(result.stderr.strip().splitlines()) == 1
        assert snapshot(vault) == before


def test_mcp_new_refuses_control_characters(make_vault: MakeVault) -> None:
    vault = make_vault()
    before = snapshot(vault)
    t = tools(vault)
    with pytest.raises(UsageError, match="control character U\\+0007 at column 5"):
        t.new("memory", "x", "Ring\x07", "api", None)
    with pytest.raises(UsageError):
        t.new("decision", "x\n", "Fine", "api", None)
    assert snapshot(vault) == before


def test_brief_headings_serve_the_project_folder_name(make_vault: MakeVault) -> None:
    folder = "ops\x1b]0;pwned\x07"
    vault = make_vault({f"projects/{folder}/memory/a.md": NEW})
    brief = render(vault, None, NOW, vault / "projects" / folder)
    clean(brief)
    assert "Lessons of project ops (projects/ops/memory/), active first:" in brief
    assert "- new: vite config new way" in brief


@pytest.mark.parametrize(
    "keys", ['superseded_by: ["[[new]]"]\n', 'superseded_by:\n  - "[[new]]"\n']
)
def test_reactivate_clears_a_list_form_superseded_by(make_vault: MakeVault, keys: str) -> None:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.store.model import read_note
    from vaultkeeper.upkeep.supersession import is_superseded

    old = superseded(keys).replace("status: active", "status: archived")
    vault = make_vault({f"{M}/old.md": old, f"{M}/new.md": NEW})
    assert is_superseded(read_note(vault, vault / M / "old.md"))
    decision = Decision("reactivate", f"{M}/old.md", evidence=f"{M}/new.md:1")
    outcome = apply_decision(vault, decision, NOW)
    assert outcome.outcome == "act", outcome.reason
    text = (vault / M / "old.md").read_text()
    assert "superseded_by" not in text and "status: active\n" in text
    assert text.replace("status: active\n", "") == old.replace(keys, "").replace(
        "status: archived\n", ""
    )
