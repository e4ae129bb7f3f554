"""`init` lays out a vault without touching what exists; `new` adds entries and indexes them."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from tests.reference import load_vault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.entries.create import new_entry
from vaultkeeper.entries.init import init_vault
from vaultkeeper.errors import UnsafePathError, UsageError, VaultkeeperError
from vaultkeeper.index.build import build_index
from vaultkeeper.registry.blocks import load_registry, parse_blocks
from vaultkeeper.store.model import parse_note
from vaultkeeper.store.templates import render

TODAY = dt.date(2026, 11, 29)
LAYOUT_DIRS = ("projects", "patterns", "references", "state")
LAYOUT_FILES = ("_index.md", "patterns/registry.md", "references/vault-spec.md", ".gitignore")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.ENV_VAULT, raising=False)
    monkeypatch.delenv(config.ENV_HOLDOUT_DAYS, raising=False)


def today_utc() -> dt.date:
    return dt.datetime.now(dt.timezone.utc).date()


def index_check(vault: Path) -> int:
    """``vaultkeeper index --check``'s exit code: 0 when the index is as generated."""
    result = CliRunner().invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert "Traceback" not in result.output
    return result.exit_code


def section(vault: Path, name: str = config.INDEX_FILE) -> list[str]:
    text = (vault / name).read_text(encoding="utf-8")
    return text.split(config.INDEX_START, 1)[1].split(config.INDEX_END, 1)[0].splitlines()[1:]


# -- init ------------------------------------------------------------------------------


def test_init_creates_the_layout(tmp_path: Path) -> None:
    vault = tmp_path / "memory"
    result = CliRunner().invoke(cli, ["init", str(vault)])
    assert result.exit_code == 0, result.output
    for folder in LAYOUT_DIRS:
        assert (vault / folder).is_dir()
        assert f"created {folder}/" in result.stdout
    for name in LAYOUT_FILES:
        assert (vault / name).is_file()
        assert f"created {name}" in result.stdout
    assert result.stdout.splitlines()[-1] == f"vault ready at {vault.resolve()}"
    assert (vault / "references/vault-spec.md").read_text() == render("vault-spec.md", {})
    assert section(vault) == [
        "## patterns",
        "- [[patterns/registry]]",
        "## references",
        "- [[references/vault-spec]] - The one authoritative spec of this vault -- layout, "
        "frontmatter schema, labels, registry counters, scanner rules",
    ]
    model = load_vault(vault)
    assert model.problems == ()
    assert [n.rel for n in model.entries] == ["references/vault-spec.md"]
    for path in vault.rglob("*"):
        if path.is_file():
            assert path.read_bytes().isascii(), path


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_keeps_state_out_of_git(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    init_vault(vault)
    (vault / "state" / "self-maintain.json").write_text("{}")
    (vault / "projects" / "state" / "memory").mkdir(parents=True)
    (vault / "projects" / "state" / "memory" / "kept.md").write_text("x")
    subprocess.run(["git", "init", "-q", str(vault)], check=True)

    def ignored(rel: str) -> bool:
        run = subprocess.run(["git", "-C", str(vault), "check-ignore", "-q", rel], check=False)
        return run.returncode == 0

    assert ignored("state/self-maintain.json")
    assert not ignored("projects/state/memory/kept.md")  # only the vault's own state/
    assert not ignored("_index.md")


def test_init_twice_changes_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    runner = CliRunner()
    runner.invoke(cli, ["init", str(vault)])
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(cli, ["init", str(vault)])
    assert result.exit_code == 0
    assert snapshot(vault, skip_state=False) == before
    assert "created" not in result.stdout
    for name in (*[d + "/" for d in LAYOUT_DIRS], *LAYOUT_FILES):
        assert f"kept    {name} (exists)" in result.stdout
    assert result.stderr == ""


def test_init_over_a_partial_vault_keeps_every_existing_file(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    files = {
        "_index.md": "# My own index\n\nno markers here\n",
        "patterns/registry.md": "### mine\n**success count:** 5\n",
        ".gitignore": "*.tmp\n",
        "notes/todo.md": "- buy milk\n",
        "README.txt": "not a vault file",
    }
    for rel, text in files.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    before = snapshot(vault)
    result = CliRunner().invoke(cli, ["init", str(vault)])
    assert result.exit_code == 0, result.output
    after = snapshot(vault)
    for rel, data in before.items():
        assert after[rel] == data, rel
    assert set(after) - set(before) == {"references/vault-spec.md"}
    assert (vault / "projects").is_dir() and (vault / "state").is_dir()
    assert "kept    _index.md (exists)" in result.stdout
    # a kept .gitignore that lets state/ into git is worth a warning, not an edit
    assert result.stderr.startswith("vaultkeeper: warning: .gitignore (kept as it is)")
    assert "/state/" in result.stderr


def test_a_fresh_vault_passes_index_check_and_lint(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(vault)]).exit_code == 0
    assert list((vault / "state").iterdir()) == []  # init leaves no lock file behind
    before = snapshot(vault)
    check = runner.invoke(cli, ["--vault", str(vault), "index", "--check"])
    assert check.exit_code == 0, check.output
    assert check.stdout.startswith("_index.md up to date: 2 entries")
    lint = runner.invoke(cli, ["--vault", str(vault), "lint"])
    assert lint.exit_code == 0, lint.output
    assert lint.stdout.strip().startswith("all checks passed")
    assert lint.stderr == ""
    assert snapshot(vault) == before


def test_init_indexes_what_a_partial_vault_already_holds(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    note = "---\nname: todo\ndescription: Things to do\n---\n- buy milk\n"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes/todo.md").write_text(note)
    result = init_vault(vault, here=True)  # a folder holding files: said to be meant
    assert "_index.md" in result.created
    assert (vault / "notes/todo.md").read_text() == note
    assert "- [[notes/todo]] - Things to do" in section(vault)
    assert index_check(vault) == 0


def test_init_keeps_a_sub_index_it_would_have_to_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "v"
    for i in range(8):
        path = vault / f"projects/p/memory/m{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: m{i}\ndescription: lesson {i}\n---\n")
    (vault / "_index-projects.md").write_text("# A person's own sub-index\n")
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 10)  # too small: the index would split
    before = snapshot(vault)
    result = init_vault(vault)
    assert snapshot(vault)["_index-projects.md"] == before["_index-projects.md"]
    assert (vault / "_index.md").read_text() == render("index.md", {})
    assert any("_index-projects.md" in w for w in result.warnings)


def test_init_with_a_split_index_creates_the_sub_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "v"
    for i in range(8):
        path = vault / f"projects/p/memory/m{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: m{i}\ndescription: lesson {i}\n---\n")
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 10)
    result = init_vault(vault)
    assert {"_index.md", "_index/", "_index/_index-projects.md"} <= set(result.created)
    assert "- [[projects/p/memory/m3]] - lesson 3" in section(vault, "_index/_index-projects.md")
    assert not list(vault.glob("_index-*"))
    assert index_check(vault) == 0


def test_init_refuses_an_unreadable_sub_index_before_creating_anything(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "_index-projects.md").write_bytes(b"# sub\n\xff\n")
    with pytest.raises(VaultkeeperError, match=r"_index-projects.md:2: not UTF-8"):
        init_vault(vault, here=True)
    assert sorted(p.name for p in vault.iterdir()) == ["_index-projects.md"]


def test_init_inside_another_vault_warns(make_vault: MakeVault) -> None:
    outer = make_vault()
    inner = outer / "projects" / "api"
    result = CliRunner().invoke(cli, ["init", str(inner)])
    assert result.exit_code == 0
    assert f"is inside the vault {outer.resolve()}" in result.stderr
    assert (inner / config.INDEX_FILE).is_file()


def test_init_uses_vault_option_when_no_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "target").mkdir()
    result = CliRunner().invoke(cli, ["--vault", "target", "init"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "target" / "_index.md").is_file()
    assert not (tmp_path / "_index.md").exists()


@pytest.mark.parametrize(
    ("blocker", "message"),
    [("projects", "exists and is not a folder"), ("_index.md/", "exists and is a folder")],
)
def test_init_refuses_before_creating_anything(tmp_path: Path, blocker: str, message: str) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    if blocker.endswith("/"):
        (vault / blocker).mkdir()
    else:
        (vault / blocker).write_text("a file")
    before = snapshot(vault, skip_state=False)
    dirs_before = sorted(p.name for p in vault.iterdir())
    result = CliRunner().invoke(cli, ["init", str(vault)])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output
    assert snapshot(vault, skip_state=False) == before
    assert sorted(p.name for p in vault.iterdir()) == dirs_before


def test_init_refuses_a_symlink_leading_out(tmp_path: Path) -> None:
    vault, outside = tmp_path / "v", tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / "patterns").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        init_vault(vault)
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in vault.iterdir()) == ["patterns"]


def test_init_on_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file.md"
    target.write_text("x")
    result = CliRunner().invoke(cli, ["init", str(target)])
    assert result.exit_code == 2
    assert "exists and is not a directory" in result.stderr


# -- new -------------------------------------------------------------------------------


def frontmatter_lines(text: str) -> list[str]:
    return text.split("---\n")[1].splitlines()


def test_new_memory_is_held_out_with_a_quoted_date(make_vault: MakeVault) -> None:
    vault = make_vault()
    result = new_entry(
        vault, "memory", "retry-once", "Retry a flaky job once", project="api", today=TODAY
    )
    assert result.path == "projects/api/memory/retry-once.md"
    text = (vault / result.path).read_text()
    assert frontmatter_lines(text) == [
        "name: retry-once",
        'description: "Retry a flaky job once"',
        "type: memory",
        "status: held_out",
        "label: inferred",
        'falsification_condition: ""',
        'holdout_until: "2026-12-06"',
        "relations: {}",
        "sources: []",
        "provenance: []",
    ]
    note = parse_note(vault / result.path, result.path, text)
    assert list(note.meta) == list(config.SCHEMA_KEYS)
    assert "\n# retry-once\n" in text


def test_new_memory_via_cli_honours_env_window_and_label(make_vault: MakeVault) -> None:
    vault = make_vault()
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "a", "-p", "api", "-d", "A lesson"],
        env={config.ENV_HOLDOUT_DAYS: "14"},
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "created projects/api/memory/a.md:1 (memory a)"
    text = (vault / "projects/api/memory/a.md").read_text()
    assert f'holdout_until: "{(today_utc() + dt.timedelta(days=14)).isoformat()}"' in text
    result = runner.invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "b", "-p", "api", "-d", "B", "--label", "rule"],
    )
    text = (vault / "projects/api/memory/b.md").read_text()
    assert "label: rule\n" in text and "status: held_out\n" in text
    assert f'holdout_until: "{(today_utc() + dt.timedelta(days=7)).isoformat()}"' in text
    # a fact needs no hold-out
    runner.invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "c", "-p", "api", "-d", "C", "--label", "fact"],
    )
    text = (vault / "projects/api/memory/c.md").read_text()
    assert "status: active\n" in text and "holdout_until" not in text


def test_new_and_use_show_a_pulled_files_name_inert(make_vault: MakeVault) -> None:
    """A file pulled with the vault, its name an OSC 52 clipboard write and its
    frontmatter broken: `new` warns about it without writing the escape to the terminal."""
    name = "projects/api/memory/bad\x1b]52;c;QUFB\x07.md"
    vault = make_vault({name: "---\nname: [unclosed\n---\nx\n"})
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), "new", "memory", "a", "-p", "api", "-d", "A lesson"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: projects/api/memory/bad\\x1b]52;c;QUFB\\x07.md:2: bad YAML" in result.stderr
    assert "\x1b" not in result.output and "\x07" not in result.output
    block = "### p\nx\n\n**success count:** 1\n**last used:** 2026-01-01\n"
    (vault / "patterns/r\x1b]52;c;QUFB\x07.md").write_text("# R\n\n" + block)
    used = CliRunner().invoke(cli, ["--vault", str(vault), "use", "p"])
    assert used.exit_code == 0, used.output
    assert "(patterns/r\\x1b]52;c;QUFB\\x07.md)" in used.stdout
    assert "\x1b" not in used.output and "\x07" not in used.output


@pytest.mark.parametrize("days", ["soon", "-1", "99999999", "1.5"])
def test_bad_holdout_env_is_refused_with_nothing_written(make_vault: MakeVault, days: str) -> None:
    vault = make_vault()
    before = snapshot(vault)
    result = CliRunner().invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "a", "-p", "api", "-d", "A"],
        env={config.ENV_HOLDOUT_DAYS: days},
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"vaultkeeper: error: {config.ENV_HOLDOUT_DAYS}=")
    assert "Traceback" not in result.output
    assert snapshot(vault) == before


@pytest.mark.parametrize(
    ("kind", "path", "status", "label"),
    [
        ("decision", "projects/api/memory/use-utc.md", "active", "fact"),
        ("research", "projects/api/research/use-utc.md", "active", "fact"),
        ("reference", "references/use-utc.md", "active", "fact"),
    ],
)
def test_new_other_kinds(
    make_vault: MakeVault, kind: str, path: str, status: str, label: str
) -> None:
    vault = make_vault()
    result = new_entry(vault, kind, "use-utc", "Store UTC", project="api", today=TODAY)
    assert result.path == path
    note = parse_note(vault / path, path, (vault / path).read_text())
    assert note.meta["type"] == kind
    assert note.meta["status"] == status
    assert note.meta["label"] == label
    assert "holdout_until" not in note.meta
    assert list(note.meta) == [k for k in config.SCHEMA_KEYS if k != "holdout_until"]
    assert result.index_line == f"- [[{path[:-3]}]] - Store UTC"
    assert result.index_line in section(vault)
    assert index_check(vault) == 0


def test_new_pattern_appends_a_block(make_vault: MakeVault) -> None:
    vault = make_vault()
    registry = vault / "patterns/registry.md"
    before = registry.read_bytes()
    result = new_entry(vault, "pattern", "bisect-first", "Bisect before reading diffs", today=TODAY)
    after = registry.read_bytes()
    assert after.startswith(before)
    assert after[len(before) :].decode() == (
        "### bisect-first\nBisect before reading diffs\n\n"
        "**success count:** 0\n**last used:** 2026-11-29\n"
    )
    blocks, problems = load_registry(vault)
    (block,) = [b for b in blocks if b.name == "bisect-first"]
    assert (block.count, block.last_used, block.line) == (0, TODAY, result.line)
    assert problems == [] and block.problems() == []
    assert result.index_line == "- [[patterns/registry#bisect-first]] - Bisect before reading diffs"
    assert section(vault)[:2] == ["## patterns", result.index_line]
    assert index_check(vault) == 0


def test_new_pattern_via_cli_uses_today(make_vault: MakeVault) -> None:
    vault = make_vault()
    result = CliRunner().invoke(cli, ["--vault", str(vault), "new", "pattern", "p1", "-d", "P"])
    assert result.exit_code == 0, result.output
    (block,) = [b for b in load_registry(vault)[0] if b.name == "p1"]
    assert block.count == 0 and block.last_used == today_utc()


def test_new_pattern_in_a_crlf_registry_without_final_newline(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": "# R\r\n\r\n### old\r\n**success count:** 1"})
    new_entry(vault, "pattern", "fresh", "Fresh one", today=TODAY)
    raw = (vault / "patterns/registry.md").read_bytes()
    assert raw.startswith(b"# R\r\n\r\n### old\r\n**success count:** 1\r\n\r\n### fresh\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert [b.name for b in load_registry(vault)[0]] == ["old", "fresh"]


def test_pattern_description_cannot_forge_a_block_or_counter(make_vault: MakeVault) -> None:
    vault = make_vault()
    new_entry(vault, "pattern", "a", "### forged", today=TODAY)
    new_entry(vault, "pattern", "b", "**success count:** 99", today=TODAY)
    blocks = {b.name: b for b in load_registry(vault)[0]}
    assert set(blocks) == {"a", "b"}
    assert blocks["b"].count == 0


INDEX = (
    "# My vault\r\n\r\nPersonal text, untouched.\r\n\r\n"
    f"{config.INDEX_START}\r\n- [[old]] - Old entry\r\n{config.INDEX_END}\r\n"
    "\r\nTrailing notes.\r\n"
)


def test_index_is_regenerated_and_nothing_outside_the_markers_changes(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"_index.md": "\ufeff" + INDEX})
    result = new_entry(vault, "reference", "spec-two", "Second spec", today=TODAY)
    text = (vault / "_index.md").read_bytes().decode("utf-8")
    head, rest = INDEX.split(config.INDEX_END)
    head = head.split(config.INDEX_START)[0] + config.INDEX_START + "\r\n"
    assert text.startswith("\ufeff" + head)
    assert text.endswith(config.INDEX_END + rest)
    body = text[len("\ufeff" + head) : -len(config.INDEX_END + rest)]
    assert "\n" not in body.replace("\r\n", "")  # the index's CRLF kept
    lines = body.split("\r\n")[:-1]
    assert lines == section(vault)
    assert "- [[old]] - Old entry" not in lines  # no such entry: regenerated away
    assert result.index_line == "- [[references/spec-two]] - Second spec"
    assert lines[lines.index("## references") + 1] == result.index_line
    assert index_check(vault) == 0


def test_index_markers_are_created_when_missing(make_vault: MakeVault) -> None:
    person = "# Mine\n\nNo markers yet.\n"
    vault = make_vault({"_index.md": person})
    new_entry(vault, "reference", "a", "A", today=TODAY)
    text = (vault / "_index.md").read_text()
    assert text.startswith(person + f"\n{config.INDEX_START}\n")
    assert text.endswith(f"{config.INDEX_END}\n")
    assert "- [[references/a]] - A" in section(vault)
    new_entry(vault, "reference", "b", "B", today=TODAY)
    text = (vault / "_index.md").read_text()
    assert text.startswith(person + f"\n{config.INDEX_START}\n")
    assert text.count(config.INDEX_START) == text.count(config.INDEX_END) == 1
    assert {"- [[references/a]] - A", "- [[references/b]] - B"} <= set(section(vault))
    assert index_check(vault) == 0


def test_index_markers_on_one_line(make_vault: MakeVault) -> None:
    vault = make_vault({"_index.md": f"top\n{config.INDEX_START}{config.INDEX_END}\nbottom\n"})
    new_entry(vault, "reference", "z-last", "Z", today=TODAY)
    text = (vault / "_index.md").read_text()
    assert text.startswith(f"top\n{config.INDEX_START}\n## patterns\n")
    assert text.endswith(f"- [[references/z-last]] - Z\n{config.INDEX_END}\nbottom\n")
    assert index_check(vault) == 0


@pytest.mark.parametrize("kind", config.ENTRY_KINDS)
def test_index_check_passes_after_new_of_every_kind(sample: Path, kind: str) -> None:
    build_index(sample)  # whatever the copy held, start from a generated index
    result = CliRunner().invoke(
        cli, ["--vault", str(sample), "new", kind, "fresh-one", "-p", "web", "-d", "Fresh"]
    )
    assert result.exit_code == 0, result.output
    indexed = result.stdout.splitlines()[1]
    assert indexed.startswith("indexed _index.md: - [[")
    assert indexed.endswith("fresh-one]] - Fresh")
    assert indexed.removeprefix("indexed _index.md: ") in section(sample)
    assert index_check(sample) == 0


def test_new_brings_a_stale_index_up_to_date_and_keeps_keywords(make_vault: MakeVault) -> None:
    vault = make_vault()
    first = new_entry(vault, "memory", "first", "First", project="p", today=TODAY)
    text = (vault / "_index.md").read_text()
    (vault / "_index.md").write_text(
        text.replace(first.index_line or "?", "- [[first]] - old -- keywords: retry, ci")
    )
    new_entry(vault, "memory", "second", "Second", project="p", today=TODAY)
    assert section(vault)[-4:-2] == [
        "- [[projects/p/memory/first]] - First -- keywords: retry, ci",
        "- [[projects/p/memory/second]] - Second",
    ]
    assert index_check(vault) == 0


def test_index_line_names_the_sub_index_line_when_split(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault()
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 9)
    for i in range(3):
        result = new_entry(vault, "decision", f"d{i}", f"Decision {i}", project="p", today=TODAY)
    assert result.index_line == "- [[projects/p/memory/d2]] - Decision 2"
    assert result.index_line in section(vault, "_index/_index-projects.md")
    assert "- [[_index-projects]] - projects/" in section(vault)
    assert index_check(vault) == 0


def test_description_is_ascii_and_never_expanded(make_vault: MakeVault) -> None:
    vault = make_vault()
    result = new_entry(
        vault,
        "memory",
        "m",
        "Old \u2014 new \u2192 {{holdout_until}} {{name}}",
        project="p",
        today=TODAY,
    )
    text = (vault / result.path).read_text()
    assert text.isascii()
    assert 'description: "Old -- new -> {{holdout_until}} {{name}}"' in text
    with pytest.raises(UsageError, match=r"non-ASCII character .* \(U\+00E9\) at column 4"):
        new_entry(vault, "memory", "m2", "caf\u00e9", project="p", today=TODAY)
    with pytest.raises(UsageError, match="index markers"):
        new_entry(vault, "memory", "m3", f"x {config.INDEX_END}", project="p", today=TODAY)
    with pytest.raises(UsageError, match="must not be empty"):
        new_entry(vault, "memory", "m4", " \n\t", project="p", today=TODAY)


UNSAFE = ["../x", "a/b", "/abs", "..", "", ".hidden", "a\\b", "x.md", "n" * 101, "a..b", "tail."]


@pytest.mark.parametrize("name", UNSAFE, ids=[repr(n)[:12] for n in UNSAFE])
@pytest.mark.parametrize("kind", ["memory", "pattern", "reference"])
def test_unsafe_names_are_refused_with_nothing_written(
    make_vault: MakeVault, name: str, kind: str
) -> None:
    vault = make_vault()
    before = snapshot(vault)
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), "new", kind, name, "-p", "api", "-d", "D"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("vaultkeeper: error: ")
    assert len(result.stderr.splitlines()) == 1
    assert snapshot(vault) == before
    assert not (vault.parent / "x.md").exists() and not (vault.parent / "x").exists()


@pytest.mark.parametrize("project", ["../evil", "a/b", "..", "/tmp"])
def test_unsafe_projects_are_refused(make_vault: MakeVault, project: str) -> None:
    vault = make_vault()
    before = snapshot(vault)
    with pytest.raises(UsageError):
        new_entry(vault, "memory", "ok", "D", project=project, today=TODAY)
    assert snapshot(vault) == before


def test_memory_needs_a_project(make_vault: MakeVault) -> None:
    vault = make_vault()
    result = CliRunner().invoke(cli, ["--vault", str(vault), "new", "memory", "x", "-d", "D"])
    assert result.exit_code == 2
    assert "needs --project P" in result.stderr


@pytest.mark.parametrize(
    ("kind", "name", "where"),
    [
        ("memory", "flaky-ci-retries", "projects/api/memory/flaky-ci-retries.md"),
        ("research", "Flaky-CI-Retries", "projects/api/memory/flaky-ci-retries.md"),
        ("reference", "VAULT-SPEC", "references/vault-spec.md"),
        ("decision", "registry", "patterns/registry.md"),
        ("pattern", "Pin-Test-Clock", "patterns/registry.md:"),
    ],
)
def test_taken_names_are_refused_even_by_case(
    sample: Path, kind: str, name: str, where: str
) -> None:
    before = snapshot(sample)
    result = CliRunner().invoke(
        cli, ["--vault", str(sample), "new", kind, name, "-p", "web", "-d", "Dup"]
    )
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"vaultkeeper: error: {name}: ")
    assert where in result.stderr
    assert snapshot(sample) == before


def test_project_differing_only_by_case_is_refused(sample: Path) -> None:
    before = snapshot(sample)
    with pytest.raises(UsageError, match="projects/api exists and differs only by case"):
        new_entry(sample, "memory", "fresh", "D", project="API", today=TODAY)
    assert snapshot(sample) == before


def test_unreadable_index_refuses_before_writing_the_entry(make_vault: MakeVault) -> None:
    vault = make_vault({"_index.md": b"# index\n\xff\xfe\n"})
    before = snapshot(vault)
    with pytest.raises(VaultkeeperError, match=r"_index.md:2: not UTF-8"):
        new_entry(vault, "memory", "m", "D", project="p", today=TODAY)
    assert snapshot(vault) == before


@pytest.mark.parametrize("kind", ["memory", "pattern"])
def test_unreadable_sub_index_refuses_before_writing(make_vault: MakeVault, kind: str) -> None:
    vault = make_vault({"_index-projects.md": b"# sub\n\xff\n"})
    before = snapshot(vault)
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), "new", kind, "m", "-p", "p", "-d", "D"]
    )
    assert result.exit_code == 1
    assert "_index-projects.md:2: not UTF-8" in result.stderr
    assert "Traceback" not in result.output
    assert snapshot(vault) == before


def test_new_in_a_registry_parse_round_trip(make_vault: MakeVault) -> None:
    vault = make_vault()
    for i in range(3):
        new_entry(vault, "pattern", f"p{i}", f"Pattern {i}", today=TODAY)
    text = (vault / "patterns/registry.md").read_text()
    blocks = parse_blocks(vault / "patterns/registry.md", "patterns/registry.md", text)
    assert [(b.name, b.count) for b in blocks] == [("p0", 0), ("p1", 0), ("p2", 0)]
    assert "\n\n\n" not in text


def test_new_says_what_it_created_when_the_index_cannot_be_written(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.store import fsio

    vault = make_vault()
    index = vault / config.INDEX_FILE
    real_replace = fsio.os.replace

    def replace(src: str, dst: str) -> None:  # an immutable _index.md (chattr +i)
        if Path(dst) == index:
            raise PermissionError(1, "Operation not permitted", src)
        real_replace(src, dst)

    monkeypatch.setattr(fsio.os, "replace", replace)
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), "new", "memory", "m", "-p", "api", "-d", "x"]
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"vaultkeeper: error: created projects/api/memory/m.md, but {index}: Operation not "
        "permitted; run `vaultkeeper index` once that is fixed\n"
    )  # was only "_index.md: Operation not permitted", the new file unmentioned
    assert (vault / "projects/api/memory/m.md").is_file()


def test_a_taken_name_and_an_unsafe_name_exit_as_the_table_says(sample: Path) -> None:
    """README's exit codes: 2 when the command line is wrong in any vault (an unsafe
    name), 1 when this vault stands in the way (the name is taken); nothing written."""
    runner = CliRunner()
    base = ["--vault", str(sample), "new", "memory"]
    rest = ["-p", "api", "-d", "A lesson", "--falsify", "it stops holding"]
    before = snapshot(sample)
    unsafe = runner.invoke(cli, [*base, "../escape", *rest])
    taken = runner.invoke(cli, [*base, "flaky-ci-retries", *rest])
    assert (unsafe.exit_code, taken.exit_code) == (2, 1)
    assert "unsafe name" in unsafe.stderr and "already taken by" in taken.stderr
    assert snapshot(sample) == before
