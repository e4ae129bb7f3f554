"""``vaultkeeper lint``: every code on a fixture that triggers it and one that must not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.lint import lint_vault
from vaultkeeper.lint.codes import CODES, Selection

INDEX = "# Index\n\n<!-- vaultkeeper:index start -->\n{links}<!-- vaultkeeper:index end -->\n"


def entry(name: str = "e", extra: str = "", body: str = "Body.\n", **keys: str) -> str:
    values = {
        "name": name,
        "description": "one line",
        "type": "memory",
        "status": "active",
        "label": "fact",
        **keys,
    }
    head = "".join(f"{k}: {v}\n" for k, v in values.items() if v != "DROP")
    return f"---\n{head}{extra}---\n\n{body}"


def vault_with(make_vault: MakeVault, files: dict[str, str], *, index: bool = True) -> Path:
    """An init'ed vault holding ``files``; the index links every one of them."""
    links = "- [[references/vault-spec]]\n" + "".join(
        f"- [[{p[:-3]}]]\n" for p in sorted(files) if p.endswith(".md")
    )
    return make_vault({**({"_index.md": INDEX.format(links=links)} if index else {}), **files})


def run(runner: CliRunner, vault: Path, *args: str) -> Result:
    return runner.invoke(cli, ["--vault", str(vault), "lint", *args])


def codes(vault: Path, **kwargs: object) -> list[tuple[str, int, str]]:
    result = lint_vault(vault, **kwargs)  # type: ignore[arg-type]
    return [(f.path, f.line, f.code) for f in result.findings]


def only(vault: Path, code: str) -> list[tuple[str, int, str]]:
    return codes(vault, select=[code])


# -- a clean vault -------------------------------------------------------------------


def test_init_vault_and_sample_vault_are_clean(
    make_vault: MakeVault, sample: Path, runner: CliRunner
) -> None:
    fresh = make_vault()
    assert lint_vault(fresh).findings == ()  # init indexes the spec it writes
    for vault in (fresh, sample):
        result = run(runner, vault)
        assert result.exit_code == 0, result.output
        assert result.stdout.strip().startswith("all checks passed")


# -- VK0 / VK1: files and format ---------------------------------------------------------


def test_vk001_unparseable_file_is_a_finding_not_a_crash(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            "bad.md": "---\nname: [unclosed\n---\nsee [[nowhere]]\n",
            "bin.md": "x\x00y",
            "ok.md": entry(),
        },
    )
    found = codes(vault)
    assert ("bad.md", 2, "VK001") in found and ("bin.md", 1, "VK001") in found
    assert ("bad.md", 4, "VK301") in found  # the body of a bad file is still checked
    assert not [f for f in found if f[0] == "ok.md"]


def test_vk101_names_the_character_and_the_replacement(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault, {"a.md": entry(body="x \u2014 y caf\u00e9\n"), "b.md": entry("b")}
    )
    result = lint_vault(vault, select=["VK101"])
    # one finding per line, at its first non-ASCII character, with the count
    assert [(f.path, f.line, f.col) for f in result.findings] == [("a.md", 9, 3)]
    (dash,) = result.findings
    assert "U+2014 EM DASH" in dash.message and "'--'" in dash.message and dash.fixable
    assert dash.message.endswith("; 2 non-ASCII characters on this line")
    lone = vault_with(make_vault, {"a.md": entry(body="caf\u00e9\n"), "b.md": entry("b")})
    (other,) = lint_vault(lone, select=["VK101"]).findings
    assert "U+00E9" in other.message and not other.fixable and "on this line" not in other.message


def test_vk102_untagged_fence(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {"a.md": entry(body="```\nx\n```\n"), "b.md": entry("b", body="```text\nx\n```\n")},
    )
    assert only(vault, "VK102") == [("a.md", 9, "VK102")]


def test_vk103_unclosed_fence(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {"a.md": entry(body="```text\nx\n"), "b.md": entry("b", body="````text\n```\n````\n")},
    )
    assert only(vault, "VK103") == [("a.md", 9, "VK103")]


SPEC_DIAGRAM = """```mermaid
flowchart LR
    S["Scheduler (session-end / idle)"] -->|scan| V[(Store)]
    B{"success count >= 2"} -->|yes| C[promote candidates]
    D{"count == 0 and idle > 90d"} -->|no| F{holdout_until passed}
```

```mermaid
stateDiagram-v2
    [*] --> active
    held_out --> active : re-validate pass
```
"""


@pytest.mark.parametrize(
    ("diagram", "line"),
    [
        ("graph TD\n    A --> B\n", 10),
        ("flowchart TD\n    A[x > y] --> B\n", 11),
        ("flowchart TD\n    A --> B(call (nested))\n", 11),
        ("flowchart TD\n    A -->|a == b| B\n", 11),
        ("flowchart TD\n    A[one<br/>two]\n", 11),
        ("stateDiagram-v2\n    a --> b : when (x)\n", 11),
    ],
)
def test_vk104_mermaid_rules(make_vault: MakeVault, diagram: str, line: int) -> None:
    vault = vault_with(make_vault, {"a.md": entry(body=f"```mermaid\n{diagram}```\n")})
    assert only(vault, "VK104") == [("a.md", line, "VK104")]


def test_vk104_spec_diagrams_pass(make_vault: MakeVault) -> None:
    vault = vault_with(make_vault, {"a.md": entry(body=SPEC_DIAGRAM)})
    assert only(vault, "VK104") == []


# -- VK2: schema ---------------------------------------------------------------------------


def test_vk201_required_keys(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            "a.md": entry(label="DROP"),
            "b.md": entry("b", description='""'),
            "c.md": "no frontmatter at all\n",
            "d.md": entry("d"),
        },
    )
    assert only(vault, "VK201") == [
        ("a.md", 6, "VK201"),
        ("b.md", 3, "VK201"),
        ("c.md", 1, "VK201"),
    ]


def test_vk202_value_outside_its_set(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {"a.md": entry(status="done"), "b.md": entry("b", label="opinion"), "c.md": entry("c")},
    )
    assert only(vault, "VK202") == [("a.md", 5, "VK202"), ("b.md", 6, "VK202")]


def test_vk203_holdout_until_must_be_a_quoted_iso_date(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            "a.md": entry(holdout_until="2026-09-02"),
            "b.md": entry("b", holdout_until='"yesterday"'),
            "c.md": entry("c", holdout_until='"2026-09-02"'),
            "d.md": entry("d", holdout_until="'2026-09-02'"),
        },
    )
    result = lint_vault(vault, select=["VK203"])
    assert [(f.path, f.fixable) for f in result.findings] == [("a.md", True), ("b.md", False)]


def test_vk204_unknown_key_is_a_warning(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = vault_with(make_vault, {"a.md": entry(tags="[x]"), "b.md": entry("b")})
    assert only(vault, "VK204") == [("a.md", 7, "VK204")]
    result = run(runner, vault)
    assert result.exit_code == 0  # warnings alone do not fail
    assert "a.md:7:1: VK204" in result.stdout


def test_schema_skips_index_registry_and_skills(make_vault: MakeVault) -> None:
    vault = vault_with(make_vault, {"skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
    assert codes(vault, select=["VK2"]) == []


# -- VK3: links ----------------------------------------------------------------------------


def test_vk301_vk302_broken_and_ambiguous(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            "a.md": entry(body="[[missing]] [[dup]] [[x/dup]] `[[in-code]]` [[B]]\n"),
            "b.md": entry("b"),
            "x/dup.md": entry("dup"),
            "y/dup.md": entry("dup"),
        },
    )
    assert codes(vault, select=["VK301", "VK302"]) == [("a.md", 9, "VK301"), ("a.md", 9, "VK302")]


def test_vk303_orphans_and_frontmatter_links(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "_index.md": INDEX.format(links="- [[hub]]\n- [[references/vault-spec]]\n"),
            "hub.md": entry("hub", extra='relations:\n  see: "[[via-frontmatter]]"\n'),
            "via-frontmatter.md": entry("via-frontmatter", body="[[via-body]]\n"),
            "via-body.md": entry("via-body"),
            "lonely.md": entry("lonely"),
            "plain.md": "a note without frontmatter is not an entry\n",
        }
    )
    assert only(vault, "VK303") == [("lonely.md", 1, "VK303")]


def test_vk304_index_over_budget(make_vault: MakeVault) -> None:
    links = "".join(f"- line {i}\n" for i in range(210))
    assert only(make_vault({"_index.md": INDEX.format(links=links)}), "VK304") == [
        ("_index.md", 201, "VK304")
    ]
    assert only(make_vault(), "VK304") == []


# -- VK4: registry ---------------------------------------------------------------------------


def test_vk401_vk402_registry(make_vault: MakeVault) -> None:
    registry = (
        "# Registry\n\n### good\n**success count:** 1\n**last used:** 2026-01-02\n\n"
        "### bad-count\n**success count:** two\n**last used:** 2026-01-02\n\n"
        "### no-date\n**success count:** 0\n\n"
        "### Good\n**success count:** 1\n**last used:** 2026-01-02\n"
    )
    vault = make_vault({"patterns/registry.md": registry})
    assert codes(vault, select=["VK4"]) == [
        ("patterns/registry.md", 8, "VK401"),
        ("patterns/registry.md", 11, "VK401"),
        ("patterns/registry.md", 14, "VK402"),
    ]
    assert codes(make_vault(), select=["VK4"]) == []


# -- selection, foreign vaults, output ------------------------------------------------------


def test_selection_prefixes_as_in_ruff() -> None:
    ours = Selection.parse(None, [], ours=True)
    assert ours.codes() == tuple(CODES)
    assert Selection.parse(["VK3"], [], ours=True).codes() == (
        "VK301",
        "VK302",
        "VK303",
        "VK304",
        "VK305",
    )
    assert "VK303" not in Selection.parse(["VK3"], ["VK303"], ours=True).codes()
    assert Selection.parse(["VK303"], ["VK3"], ours=True).codes() == ("VK303",)  # longest wins
    assert Selection.parse(["vk301,vk302"], [], ours=True).codes() == ("VK301", "VK302")
    foreign = Selection.parse(None, [], ours=False).codes()
    assert not any(c.startswith(("VK101", "VK102", "VK104", "VK2", "VK4")) for c in foreign)
    assert "VK103" in foreign and "VK301" in foreign
    assert Selection.parse(["VK101", "VK2"], [], ours=False).codes()[:2] == ("VK101", "VK201")


def test_unknown_code_is_a_usage_error(make_vault: MakeVault, runner: CliRunner) -> None:
    result = run(runner, make_vault(), "--select", "VK999")
    assert result.exit_code == 2
    assert "VK999" in result.stderr


def test_foreign_vault_skips_our_format_unless_selected(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault(
        {".obsidian/app.json": "{}", "Note.md": "---\ntags: [x]\n---\ncaf\u00e9 \u2014 [[Gone]]\n"},
        init=False,
    )
    result = runner.invoke(cli, ["lint", str(vault)])
    assert result.exit_code == 0  # a note not written yet: a warning there
    assert result.stdout.splitlines() == [
        "Note.md:4:8: VK301 broken link [[Gone]]: no file named 'Gone' in the vault",
        "1 finding(s): 0 error(s), 1 warning(s) in 1 file(s)",
    ]
    assert "VK101" not in result.stdout and "VK201" not in result.stdout
    selected = runner.invoke(cli, ["lint", "--select", "VK101", str(vault / "Note.md")])
    assert [ln.split()[1] for ln in selected.stdout.splitlines()[:-1]] == ["VK101"]


def test_json_output(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = vault_with(make_vault, {"a.md": entry(body="[[gone]]\n", tags="x")})
    result = run(runner, vault, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [(d["code"], d["severity"]) for d in data] == [("VK204", "warning"), ("VK301", "error")]
    assert set(data[0]) == {"path", "line", "col", "code", "severity", "message", "fixable"}
    assert data[1]["path"] == "a.md" and data[1]["line"] == 10 and data[1]["col"] == 1


def test_paths_limit_what_is_reported(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = vault_with(
        make_vault,
        {"p/a.md": entry(body="[[gone]]\n"), "q/b.md": entry("b", body="[[p/a]] [[x]]\n")},
    )
    result = runner.invoke(cli, ["--vault", str(vault), "lint", str(vault / "q")])
    assert [ln.split(":")[0] for ln in result.stdout.splitlines()[:-1]] == ["q/b.md"]
    outside = runner.invoke(cli, ["--vault", str(vault), "lint", str(vault.parent)])
    assert outside.exit_code == 2


def test_lint_never_writes_without_fix(make_vault: MakeVault, runner: CliRunner) -> None:
    """Nothing but its own figures for `status` (a row of state/vaultkeeper.db)."""
    vault = vault_with(make_vault, {"a.md": entry(body="x \u2014 y\n", holdout_until="2026-01-01")})
    before = snapshot(vault, skip_state=False)
    assert run(runner, vault).exit_code == 1
    after = snapshot(vault, skip_state=False)
    assert after.pop(f"{config.STATE_DIR}/{config.DB_FILE}", None) is not None
    assert after == before


# -- --fix ---------------------------------------------------------------------------------


def test_fix_replaces_glyphs_outside_code_and_quotes_holdout(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    body = (
        "a \u2014 b \u2192 c \u2212 d \u00a7 e \u00d7 f \u2264 g \u2265 h\n"
        "keep `x \u2192 y` inline\n"
        "```text\nkeep \u2014 here\n```\n"
        "\u2265 opening a line would become a quote\n"
        "caf\u00e9\n"
    )
    text = entry(
        description="one \u2014 line", holdout_until="2026-09-02  # comment", body=body
    ).replace("\n", "\r\n")
    vault = vault_with(make_vault, {"a.md": text})
    result = run(runner, vault, "--fix")
    fixed = (vault / "a.md").read_bytes().decode("utf-8")
    expected = (
        text.replace("one \u2014 line", "one -- line")
        .replace("2026-09-02  # comment", '"2026-09-02"  # comment')
        .replace(
            "a \u2014 b \u2192 c \u2212 d \u00a7 e \u00d7 f \u2264 g \u2265 h",
            "a -- b -> c - d sec e x f <= g >= h",
        )
    )
    assert fixed == expected
    out = result.stdout.splitlines()
    assert "fixed 9 in 1 file(s)" in out
    remaining = [ln.split(":")[1] + " " + ln.split()[1] for ln in out if ": VK" in ln]
    assert remaining == ["11 VK101", "13 VK101", "15 VK101", "16 VK101"]
    assert result.exit_code == 1
    again = run(runner, vault, "--fix")
    assert "fixed 0 in 0 file(s)" in again.stdout
    assert (vault / "a.md").read_bytes().decode("utf-8") == expected


def test_fix_keeps_frontmatter_when_yaml_would_change(make_vault: MakeVault) -> None:
    # ``- 3`` would turn a scalar into a list: this glyph is left for a person
    text = entry(extra="falsification_condition: \u2212 3\n")
    vault = vault_with(make_vault, {"a.md": text})
    result = lint_vault(vault, select=["VK101"], fix=True)
    assert (vault / "a.md").read_text(encoding="utf-8") == text
    assert [f.line for f in result.findings] == [7]


def test_fix_with_nothing_to_fix_writes_nothing(make_vault: MakeVault) -> None:
    vault = vault_with(make_vault, {"a.md": entry(body="[[gone]]\n")})
    (vault / "state").rmdir()
    before = snapshot(vault, skip_state=False)
    result = lint_vault(vault, fix=True)
    assert result.fixed == 0 and [f.code for f in result.findings] == ["VK301"]
    assert snapshot(vault, skip_state=False) == before


# -- hostile input (adversarial review) --------------------------------------------------


def test_a_fifo_named_md_is_a_vk001_not_a_hang(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = vault_with(make_vault, {"a.md": entry()})
    os.mkfifo(vault / "pipe.md")
    result = run(runner, vault)
    assert "pipe.md:1:1: VK001 not a regular file" in result.stdout
    assert result.exit_code == 1


def test_fix_through_a_symlink_keeps_the_link_and_never_writes_outside(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    text = entry(body="a \u2014 b\n")
    outside = tmp_path / "outside.md"
    outside.write_text(text, encoding="utf-8")
    vault = vault_with(make_vault, {"real.md": text})
    (vault / "inner.md").symlink_to("real.md")
    (vault / "outer.md").symlink_to(outside)
    result = lint_vault(vault, select=["VK101", "VK001"], fix=True)
    assert (vault / "inner.md").is_symlink() and (vault / "outer.md").is_symlink()
    assert (vault / "real.md").read_text(encoding="utf-8") == text.replace("\u2014", "--")
    assert outside.read_text(encoding="utf-8") == text  # outside the vault: not ours to fix
    # nor read: said once, as a symlink out of the vault
    assert [(f.path, f.code) for f in result.findings] == [("outer.md", "VK001")]


def test_a_file_name_holding_escapes_reaches_the_terminal_inert(sample: Path) -> None:
    # color=True: what a terminal gets (click strips only CSI sequences when not a tty)
    name = "bad\x1b[2Jname\x1b]0;pwned\x07.md"
    (sample / "projects/api/memory" / name).write_text(entry("bad"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(sample), "lint"], color=True)
    assert result.exit_code == 0, result.output  # an orphan: a warning
    ours = [x for x in result.stdout.splitlines() if "name" in x and "VK" in x]
    assert ours, result.stdout
    assert all(
        x.startswith("projects/api/memory/bad\\x1b[2Jname\\x1b]0;pwned\\x07.md:") for x in ours
    )
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_index_and_verify_show_a_broken_files_escaped_name_inert(sample: Path) -> None:
    """A note pulled with the vault, named with an OSC 52 clipboard write, its frontmatter
    broken: index's warning and verify's row name it without the escape."""
    name = "bad\x1b]52;c;QUFB\x07.md"
    (sample / "projects/api/memory" / name).write_text("---\nname: [x\n---\n", encoding="utf-8")
    for command in ("index", "verify"):
        result = CliRunner().invoke(cli, ["--vault", str(sample), command], color=True)
        assert "bad\\x1b]52;c;QUFB\\x07.md" in result.output, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output


def test_the_count_is_of_the_files_paths_name_not_the_whole_vault(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample / "projects/api")
    memory = runner.invoke(cli, ["lint", "memory"])
    assert memory.stdout == "all checks passed (3 file(s))\n"  # was the vault's 11
    one = runner.invoke(cli, ["lint", "memory/flaky-ci-retries.md"])
    assert one.stdout == "all checks passed (1 file(s))\n"
    whole = runner.invoke(cli, ["lint"])
    assert whole.stdout == f"all checks passed ({len(list(sample.rglob('*.md')))} file(s))\n"


# -- the link rules alone look closely only at a note holding a link that may be wrong
# somewhere (lint/graph.LinkCheck.suspects): they must say what the whole lint says
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NAMES = ["a.md", "b.md", "x/a.md", "x/c.md", "y/c.md", "y/d.md", "z/e.png"]
_LINKS = st.sampled_from(
    ["[[a]]", "[[c]]", "![[c#H]]", "[[d#Missing]]", "[[d#^blk]]", "[[./c]]", "[[../a]]",
     "[[gone]]", "[[#H]]", "[[#Nope]]", "[[e.png]]", "[[x/c|alias]]", "`[[gone]]`", "```",
     "# H", "text ^blk", "[[a\\|t]]", "> [[c]]", ""]
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_LINKS, max_size=6).map("\n".join), min_size=6, max_size=6))
def test_the_link_rules_alone_find_what_the_whole_lint_finds(
    tmp_path_factory: pytest.TempPathFactory, bodies: list[str]
) -> None:
    vault = tmp_path_factory.mktemp("v")
    (vault / ".obsidian").mkdir()
    for name, body in zip(_NAMES, [*bodies, ""], strict=True):
        (vault / name).parent.mkdir(exist_ok=True)
        (vault / name).write_text(body + "\n", encoding="utf-8")
    alone = lint_vault(vault, select=["VK3"]).findings
    whole = lint_vault(vault, select=["VK3", "VK105"]).findings  # every note read whole
    assert alone == tuple(f for f in whole if f.code.startswith("VK3"))
