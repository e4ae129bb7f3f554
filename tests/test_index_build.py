"""``vaultkeeper index``: regenerate the marked section of _index.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index
from vaultkeeper.lint import lint_vault

START, END = config.INDEX_START, config.INDEX_END


def entry(name: str, description: str) -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\ntype: memory\nstatus: active\n"
        f"label: fact\n---\n\nBody.\n"
    )


FILES = {
    "projects/api/memory/zeta.md": entry("zeta", "Last in its folder"),
    "projects/api/memory/Alpha.md": entry("Alpha", "First in its folder"),
    "projects/web/research/survey.md": entry("survey", "A   survey\n  of browsers"),
    "top-level.md": entry("top-level", "At the root"),
    "patterns/registry.md": (
        "# Pattern registry\n\n### bisect-first\nBisect before reading diffs,\nthen read.\n\n"
        "**success count:** 2\n**last used:** 2026-01-02\n"
    ),
    "Attachments/pic.png": "not markdown, not an entry",
}

SECTION = [
    "## (root)",
    "- [[top-level]] - At the root",
    "## patterns",
    "- [[patterns/registry#bisect-first]] - Bisect before reading diffs, then read.",
    "## projects/api/memory",
    "- [[projects/api/memory/Alpha]] - First in its folder",
    "- [[projects/api/memory/zeta]] - Last in its folder",
    "## projects/web/research",
    "- [[projects/web/research/survey]] - A survey of browsers",
    "## references",
    "- [[references/vault-spec]] - The one authoritative spec of this vault -- layout, "
    "frontmatter schema, labels, registry counters, scanner rules",
]


def section(vault: Path, name: str = config.INDEX_FILE) -> list[str]:
    text = (vault / name).read_text(encoding="utf-8")
    return text.split(START + "\n", 1)[1].split(END, 1)[0].splitlines()


def test_regenerates_grouped_sorted_lines(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = make_vault(FILES)
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "wrote _index.md"
    assert section(vault) == SECTION
    assert lint_vault(vault, select=["VK303"]).findings == ()  # every entry reachable


def test_text_outside_the_markers_is_kept_byte_for_byte(make_vault: MakeVault) -> None:
    head = "# My map\r\n\r\nA person's preamble \u2014 kept as is.  \r\n"
    tail = "\r\nA person's postscript.\r\n\r\n"
    old = f"\ufeff{head}{START}\r\n- [[stale-entry]] - gone\r\n{END}{tail}"
    vault = make_vault({**FILES, "_index.md": old})
    build_index(vault)
    raw = (vault / "_index.md").read_bytes().decode("utf-8")
    assert raw.startswith("\ufeff")
    raw = raw[1:]
    assert raw.startswith(head + START + "\r\n")
    assert raw.endswith(END + tail)
    assert raw[len(head + START) :].startswith("\r\n## (root)\r\n")
    assert "stale-entry" not in raw


def test_keywords_a_person_added_survive(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)
    build_index(vault)
    text = (vault / "_index.md").read_text(encoding="utf-8")
    text = text.replace(
        "- [[projects/api/memory/zeta]] - Last in its folder",
        "- [[zeta|Zeta]] - old description -- keywords: retry, ci",  # a short link works too
    ).replace(
        "- [[patterns/registry#bisect-first]] - Bisect before reading diffs, then read.",
        "- [[patterns/registry#bisect-first]] -- keywords: git",
    )
    (vault / "_index.md").write_text(text, encoding="utf-8")
    (vault / "projects/api/memory/zeta.md").write_text(entry("zeta", "New description"))
    build_index(vault)
    lines = section(vault)
    assert "- [[projects/api/memory/zeta]] - New description -- keywords: retry, ci" in lines
    assert (
        "- [[patterns/registry#bisect-first]] - Bisect before reading diffs, then read."
        " -- keywords: git"
    ) in lines
    before = snapshot(vault)
    assert build_index(vault).changed == ()  # stable once regenerated
    assert snapshot(vault) == before


def test_deterministic_whatever_the_history(make_vault: MakeVault) -> None:
    one = make_vault(FILES)
    two = make_vault(dict(reversed(list(FILES.items()))))
    (two / "_index.md").write_text(f"# Index\n\n{START}\n- [[x]] - junk\n{END}\n")
    build_index(one)
    build_index(two)
    assert section(one) == section(two) == SECTION


def test_check_changes_nothing_and_exits_1_when_stale(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault(FILES)
    before = snapshot(vault, skip_state=False)
    stale = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert stale.exit_code == 1
    assert stale.stdout.splitlines()[0] == "stale _index.md"
    assert snapshot(vault, skip_state=False) == before
    assert runner.invoke(cli, ["--vault", str(vault), "index"]).exit_code == 0
    fresh = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert fresh.exit_code == 0
    assert "up to date" in fresh.stdout


def test_creates_the_index_or_its_markers(make_vault: MakeVault) -> None:
    bare = make_vault({"n.md": entry("n", "d")}, init=False)
    build_index(bare)
    assert section(bare) == ["## (root)", "- [[n]] - d"]
    marked = make_vault({"n.md": entry("n", "d"), "_index.md": "# Mine\n"}, init=False)
    build_index(marked)
    assert (
        marked / "_index.md"
    ).read_text() == f"# Mine\n\n{START}\n## (root)\n- [[n]] - d\n{END}\n"


def test_unparseable_entry_keeps_its_line(make_vault: MakeVault) -> None:
    vault = make_vault({"broken.md": "---\nname: [x\n---\n"}, init=False)
    build_index(vault)
    assert section(vault) == ["## (root)", "- [[broken]]"]


def test_split_into_sub_indexes_above_the_budget(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, runner: CliRunner
) -> None:
    files = {f"projects/p/memory/m{i:02}.md": entry(f"m{i:02}", f"lesson {i}") for i in range(12)}
    vault = make_vault({**FILES, **files})
    build_index(vault)
    text = (vault / "_index.md").read_text()
    (vault / "_index.md").write_text(
        text.replace("- [[projects/p/memory/m03]] - lesson 3", "- [[m03]] -- keywords: three")
    )
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 30)
    result = build_index(vault)
    assert result.split and result.over_budget == ()
    assert result.changed == (
        "_index.md",
        "_index/_index-patterns.md",
        "_index/_index-projects.md",
        "_index/_index-references.md",
    )
    assert section(vault) == [
        "## (root)",
        "- [[top-level]] - At the root",
        "## sub-indexes",
        "- [[_index-patterns]] - patterns/",
        "- [[_index-projects]] - projects/",
        "- [[_index-references]] - references/",
    ]
    projects = section(vault, "_index/_index-projects.md")
    assert projects[:2] == [
        "## projects/api/memory",
        "- [[projects/api/memory/Alpha]] - First in its folder",
    ]
    assert "- [[projects/p/memory/m03]] - lesson 3 -- keywords: three" in projects
    assert (vault / "_index/_index-projects.md").read_text().startswith("# Index: projects/\n")
    assert not list(vault.glob("_index-*"))  # the vault's root gains no file of its own
    assert lint_vault(vault, select=["VK3"]).findings == ()  # reachable through sub-indexes
    assert runner.invoke(cli, ["--vault", str(vault), "index", "--check"]).exit_code == 0
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 200)
    back = build_index(vault)
    assert not back.split and back.changed == ("_index.md",)
    assert back.unused == (
        "_index/_index-patterns.md",
        "_index/_index-projects.md",
        "_index/_index-references.md",
    )
    assert "- [[projects/p/memory/m03]] - lesson 3 -- keywords: three" in section(vault)


def _split_vault(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> Path:
    files = {f"projects/p/memory/m{i:02}.md": entry(f"m{i:02}", f"lesson {i}") for i in range(12)}
    vault = make_vault({**FILES, **files})
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 30)
    assert build_index(vault).split
    return vault


def _as_older_version(vault: Path) -> list[str]:
    """The layout versions before _index/ wrote: the same sub-indexes at the root."""
    names = sorted(p.name for p in (vault / "_index").iterdir())
    for name in names:
        os.replace(vault / "_index" / name, vault / name)
    (vault / "_index").rmdir()
    return names


def test_index_moves_an_older_versions_root_sub_indexes_into_their_folder(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, runner: CliRunner
) -> None:
    vault = _split_vault(make_vault, monkeypatch)
    names = _as_older_version(vault)
    texts = {n: (vault / n).read_bytes() for n in names}
    root = (vault / "_index.md").read_bytes()
    before = snapshot(vault)
    check = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert check.exit_code == 1 and snapshot(vault) == before
    assert check.stderr.startswith("vaultkeeper: would move 3 sub-index file(s) from the")
    assert "delete it by hand" not in check.output  # they are linked: moved, not dropped
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "vaultkeeper: moved 3 sub-index file(s) from the vault's root into _index/ "
        "(the links to them are unchanged)\n"
    )
    assert not list(vault.glob("_index-*"))
    assert {n: (vault / "_index" / n).read_bytes() for n in names} == texts  # moved, not rewritten
    assert (vault / "_index.md").read_bytes() == root  # [[_index-projects]] still resolves
    assert "_index.md up to date" in result.stdout
    assert lint_vault(vault).findings == ()
    again = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert again.exit_code == 0 and again.stderr == ""  # said once
    assert runner.invoke(cli, ["--vault", str(vault), "index", "--check"]).exit_code == 0


def test_new_on_an_older_versions_layout_moves_its_sub_indexes_too(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, runner: CliRunner
) -> None:
    vault = _split_vault(make_vault, monkeypatch)
    _as_older_version(vault)
    listed = section(vault, "_index-projects.md")
    args = ["--vault", str(vault), "new", "memory", "fresh", "-p", "p", "-d", "Fresh lesson"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.output
    assert not list(vault.glob("_index-*"))  # no second file of one name: links stay plain
    projects = section(vault, "_index/_index-projects.md")
    assert "- [[projects/p/memory/fresh]] - Fresh lesson" in projects
    assert set(listed) <= set(projects)
    assert runner.invoke(cli, ["--vault", str(vault), "index", "--check"]).exit_code == 0


@pytest.mark.parametrize(
    "damage",
    [b"\n<!-- vaultkeeper:index start -->\n- [[x]]\n", b"\xff\xfe\n", b"\x00\n"],
    ids=["markers", "not-utf8", "nul"],
)
def test_an_index_refused_moves_no_root_sub_index(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, runner: CliRunner, damage: bytes
) -> None:
    # `index` once moved the older layout's sub-indexes into _index/ and then refused the
    # root _index.md, saying "nothing was changed": a refusal had moved files.
    vault = _split_vault(make_vault, monkeypatch)
    _as_older_version(vault)
    with (vault / config.INDEX_FILE).open("ab") as fh:
        fh.write(damage)
    before = snapshot(vault)
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("vaultkeeper: error: ") and "moved" not in result.stderr
    assert snapshot(vault) == before


def test_index_leaves_a_root_sub_index_whose_name_the_folder_holds(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, runner: CliRunner
) -> None:
    vault = _split_vault(make_vault, monkeypatch)
    (vault / "_index-projects.md").write_text("# A person's own notes\n")
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "vaultkeeper: warning: _index-projects.md: _index/_index-projects.md exists too; "
        "keep one of them by hand\n"
    )
    assert (vault / "_index-projects.md").read_text() == "# A person's own notes\n"


def test_index_refuses_a_file_where_the_sub_indexes_folder_belongs(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, runner: CliRunner
) -> None:
    files = {f"projects/p/memory/m{i:02}.md": entry(f"m{i:02}", f"lesson {i}") for i in range(12)}
    vault = make_vault({**FILES, **files, "_index": "not a folder\n"})
    build_index(vault)
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 30)
    before = snapshot(vault)
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code != 0
    assert result.stderr == (
        f"vaultkeeper: error: {vault / '_index'}: exists and is not a folder; sub-indexes go "
        "there (move it away, then run `vaultkeeper index`); nothing was changed\n"
    )
    assert snapshot(vault) == before


# -- hostile input (adversarial review) --------------------------------------------------


def test_a_symlinked_index_stays_a_link(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = make_vault(FILES)
    (vault / config.INDEX_FILE).rename(vault / "real-index.txt")
    (vault / config.INDEX_FILE).symlink_to("real-index.txt")
    result = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    assert (vault / config.INDEX_FILE).is_symlink()
    assert section(vault, "real-index.txt") == SECTION


def test_an_index_linked_out_of_the_vault_is_refused_before_any_write(
    make_vault: MakeVault, runner: CliRunner, tmp_path: Path
) -> None:
    vault = make_vault(FILES)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# mine\n")
    (vault / config.INDEX_FILE).unlink()
    (vault / config.INDEX_FILE).symlink_to(outside)
    before = snapshot(vault)
    for args in (["index"], ["index", "--check"], ["new", "memory", "m", "-p", "api", "-d", "x"]):
        result = runner.invoke(cli, ["--vault", str(vault), *args])
        assert result.exit_code == 1, result.output
        assert result.stderr == (
            f"vaultkeeper: error: {config.INDEX_FILE}: resolves outside the vault "
            f"{vault.resolve()}; refused\n"
        )
        assert snapshot(vault) == before  # `new` wrote no entry either
    assert outside.read_text() == "# mine\n"


@pytest.mark.parametrize(
    ("markers", "line", "found"),
    [
        (f"{START}\n", 3, "1 and 0"),  # a start whose end was deleted by hand
        (f"{END}\n{START}\n", 3, "1 and 1"),  # the wrong way round
        (f"{START}\n{START}\n{END}\n", 3, "2 and 1"),
        (f"{END}\n", 3, "0 and 1"),
    ],
)
def test_broken_markers_are_refused_and_a_persons_text_survives(
    make_vault: MakeVault, runner: CliRunner, markers: str, line: int, found: str
) -> None:
    # A lone start marker once got a second pair appended; the next run then replaced
    # everything from the first start to the new end: the person's notes, gone for good.
    index = f"# Index\n\n{markers}my precious notes\n"
    vault = make_vault({**FILES, config.INDEX_FILE: index})
    before = snapshot(vault)
    for args in (["index"], ["index", "--check"], ["new", "memory", "m", "-p", "api", "-d", "x"]):
        result = runner.invoke(cli, ["--vault", str(vault), *args])
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"vaultkeeper: error: {config.INDEX_FILE}:{line}: needs ")
        assert f"(found {found}); fix the markers by hand, nothing was changed" in result.stderr
        assert snapshot(vault) == before


def test_a_marker_inside_a_description_cannot_cut_the_section(make_vault: MakeVault) -> None:
    registry = f"# Pattern registry\n\n### p\nSee {START} here.\n\n**success count:** 1\n"
    vault = make_vault(
        {
            "references/evil.md": entry("evil", f'"x {END} y"'),
            "patterns/registry.md": registry + "**last used:** 2026-01-02\n",
        }
    )
    build_index(vault)
    text = (vault / config.INDEX_FILE).read_text()
    assert text.count(START) == 1 and text.count(END) == 1  # was 2 ends: the next run broke
    assert f"- [[references/evil]] - x &lt;{END[1:]} y" in section(vault)
    assert f"- [[patterns/registry#p]] - See &lt;{START[1:]} here." in section(vault)
    assert not build_index(vault, check=True).changed


def test_a_fifo_index_is_refused_not_waited_on(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = make_vault(FILES)
    (vault / config.INDEX_FILE).unlink()
    os.mkfifo(vault / config.INDEX_FILE)
    for args in (["index"], ["index", "--check"], ["new", "memory", "m", "-p", "api", "-d", "x"]):
        result = runner.invoke(cli, ["--vault", str(vault), *args])
        assert result.exit_code == 1
        assert result.stderr.endswith("_index.md: not a regular file; fix it before regenerating\n")
    assert not (vault / "projects/api/memory/m.md").exists()


def test_check_tells_a_missing_index_from_a_stale_one(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "---\ndescription: x\n---\n"}, init=False)
    first = build_index(vault, check=True)
    assert (first.changed, first.missing) == (("_index.md",), ("_index.md",))
    assert not (vault / "_index.md").exists()
    build_index(vault)
    (vault / "b.md").write_text("---\ndescription: y\n---\n")
    stale = build_index(vault, check=True)
    assert (stale.changed, stale.missing) == (("_index.md",), ())


def test_check_on_a_missing_index_says_missing(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = make_vault({"a.md": "---\ndescription: x\n---\n"}, init=False)
    missing = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert missing.exit_code == 1
    assert missing.stdout.splitlines() == [
        "missing _index.md",
        "_index.md missing: 1 entries, 9 lines, 257 bytes",
    ]
    assert not (vault / "_index.md").exists()
    assert runner.invoke(cli, ["--vault", str(vault), "index"]).exit_code == 0
    (vault / "b.md").write_text("---\ndescription: y\n---\n")
    stale = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert stale.exit_code == 1 and stale.stdout.splitlines()[0] == "stale _index.md"
    assert stale.stdout.splitlines()[1].startswith("_index.md stale: 2 entries")


def test_json_lists_each_problem_as_its_line(make_vault: MakeVault, runner: CliRunner) -> None:
    """``index --json`` and ``new --json`` give a file the index lists without a
    description as the one line the text output warns with, not as its fields."""
    vault = make_vault({"broken.md": "---\nname: [x\n---\n"})
    done = runner.invoke(cli, ["--vault", str(vault), "index", "--json"])
    assert done.exit_code == 0, done.output
    problems = json.loads(done.stdout)["problems"]
    assert len(problems) == 1 and problems[0].startswith("broken.md:2: ")
    new = ["--vault", str(vault), "new", "reference", "fresh", "-d", "A fresh one", "--json"]
    done = runner.invoke(cli, new)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["problems"] == problems


def test_an_undecodable_registry_keeps_its_lines_and_the_command_fails(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    """Issue 32 item 14: one undecodable byte in ``patterns/registry.md`` made ``index``
    (and ``new``) drop every registry line with exit 0, and a person's keywords were
    lost for good once the byte was fixed. Its lines stay as they were; ``index`` says
    so and exits 1."""
    vault = make_vault(FILES)
    assert runner.invoke(cli, ["--vault", str(vault), "index"]).exit_code == 0
    index = vault / "_index.md"
    text = index.read_text()
    line = "- [[patterns/registry#bisect-first]] - Bisect before reading diffs, then read."
    assert line in text
    index.write_text(text.replace(line, line + " -- keywords: bisect, regression"))
    before = index.read_bytes()
    registry = vault / "patterns" / "registry.md"
    good = registry.read_bytes()
    registry.write_bytes(good.replace(b"then read.", b"then read \xff."))
    done = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert done.exit_code == 1, done.output
    assert "patterns/registry.md:5: not UTF-8 (byte 0xff)" in done.stderr
    assert "its index lines are kept as they were" in done.stderr
    assert index.read_bytes() == before
    check = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert check.exit_code == 1 and index.read_bytes() == before
    new = ["--vault", str(vault), "new", "reference", "fresh", "-d", "A fresh one"]
    assert runner.invoke(cli, new).exit_code == 0
    assert line + " -- keywords: bisect, regression" in index.read_text()
    registry.write_bytes(good)  # fixed: regenerated, the keywords still there
    done = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert done.exit_code == 0, done.output
    assert line + " -- keywords: bisect, regression" in index.read_text()


def test_a_broken_frontmatter_is_listed_as_before_and_no_failure(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    """Text that reads but does not parse (broken YAML) is a lint matter: listed without
    a description, exit 0, as before."""
    vault = make_vault({"broken.md": "---\nname: [x\n---\n"})
    done = runner.invoke(cli, ["--vault", str(vault), "index"])
    assert done.exit_code == 0 and "warning: broken.md:2" in done.stderr


def test_status_finds_a_conflict_left_in_a_sub_index_in_its_folder(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.status.health import leftovers

    vault = _split_vault(make_vault, monkeypatch)
    path = vault / "_index" / "_index-projects.md"
    path.write_text(path.read_text() + "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    assert any(line.startswith("_index/_index-projects.md:") for line in leftovers(vault))
