"""The vault model: entries, their frontmatter, and one problem per unusable file."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import reference
from tests.conftest import SAMPLE_VAULT, MakeVault, corpus, run_vaultkeeper
from tests.reference import load_vault
from vaultkeeper.registry.blocks import load_registry
from vaultkeeper.store.model import (
    ParseError,
    Problem,
    load_yaml,
    parse_date,
    parse_note,
    split_frontmatter,
    split_lines,
)
from vaultkeeper.store.vault import is_memory_path

GOOD = """---
name: good
description: A good note
type: memory
status: held_out   # still being checked
label: inferred
falsification_condition: "it stops being true"
holdout_until: "2026-09-02"
relations: {}
sources: []
provenance:
  - "projects/api/research/survey.md:9"
---

# good

See [[other-note]] and [[projects/api/memory/third|the third]].
"""


def problems_by_path(vault: Path) -> dict[str, Problem]:
    model = load_vault(vault)
    return {p.path: p for p in model.problems}


def test_entry_has_frontmatter_body_and_key_lines(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/api/memory/good.md": GOOD})
    model = load_vault(vault)
    assert model.problems == ()
    (note,) = [n for n in model.entries if n.rel == "projects/api/memory/good.md"]
    assert note.meta["name"] == "good"
    assert note.meta["status"] == "held_out"
    assert note.meta["holdout_until"] == "2026-09-02"  # quoted: stays a string
    assert note.meta["provenance"] == ["projects/api/research/survey.md:9"]
    assert note.meta["relations"] == {}
    fm = note.frontmatter
    assert fm is not None
    assert fm.end_line == 13
    assert fm.key_lines["name"] == 2
    assert fm.key_lines["status"] == 5
    assert fm.key_lines["provenance"] == 11
    assert "  - " not in fm.key_lines  # list items are not keys
    assert note.body_line == 14
    assert note.body.startswith("\n# good\n")
    assert "[[other-note]]" in note.body
    assert note.get_str("label") == "inferred"
    assert note.get_str("missing") is None
    # key lines point at the lines an editor shows
    lines = note.text.split("\n")
    for key, line_no in fm.key_lines.items():
        assert lines[line_no - 1].startswith(f"{key}:")


def test_files_without_frontmatter_are_notes_but_not_entries(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/api/research/plain.md": "# just text\n\n--- not a fence\n"})
    model = load_vault(vault)
    rels = {n.rel for n in model.notes}
    assert "projects/api/research/plain.md" in rels
    assert "_index.md" in rels  # no frontmatter: a note, not an entry
    entry_rels = {n.rel for n in model.entries}
    assert "projects/api/research/plain.md" not in entry_rels
    assert "_index.md" not in entry_rels
    assert "references/vault-spec.md" in entry_rels


def test_crlf_and_bom_frontmatter_parse_with_right_lines(make_vault: MakeVault) -> None:
    crlf = GOOD.replace("\n", "\r\n")
    vault = make_vault(
        {
            "projects/a/memory/crlf.md": crlf,
            "projects/a/memory/bom.md": b"\xef\xbb\xbf" + GOOD.encode(),
        }
    )
    model = load_vault(vault)
    assert model.problems == ()
    for rel in ("projects/a/memory/crlf.md", "projects/a/memory/bom.md"):
        (note,) = [n for n in model.notes if n.rel == rel]
        assert note.meta["status"] == "held_out"
        assert note.frontmatter is not None
        assert note.frontmatter.key_lines["status"] == 5
        assert note.frontmatter.end_line == 13


# Each bad file, the line its problem must name (None: the whole file), and words of
# the one-line reason.
BAD_FILES: list[tuple[str, bytes, int | None, str]] = [
    ("bad-yaml.md", b"---\nname: x\ndescription: [unclosed\n---\nbody\n", 3, "bad YAML"),
    (
        "bad-yaml-mapping.md",
        b"---\nname: x\ntype: memory\nlabel: a: b\n---\n",
        4,
        "mapping values are not allowed",
    ),
    ("latin1.md", b"---\nname: x\n---\nna\xefve caf\xe9\n", 4, "not UTF-8"),
    ("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None, "binary"),
    ("list.md", b"---\n- a\n- b\n---\n", 2, "frontmatter is a list, not a mapping"),
    ("scalar.md", b"---\njust a sentence\n---\n", 2, "frontmatter is a str, not a mapping"),
    ("unclosed.md", b"---\nname: x\ndescription: y\n\n# body, never closed\n", 1, "never closed"),
    (
        "impossible-date.md",
        b"---\nname: x\ndescription: y\nholdout_until: 2026-02-30\n---\n",
        4,
        "2026-02-30",
    ),
]


@pytest.mark.parametrize(("name", "raw", "line", "words"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_each_bad_file_is_one_problem_with_path_line_and_reason(
    make_vault: MakeVault, name: str, raw: bytes, line: int | None, words: str
) -> None:
    rel = f"projects/p/memory/{name}"
    vault = make_vault({rel: raw, "projects/p/memory/fine.md": GOOD})
    model = load_vault(vault)
    problems = [p for p in model.problems if p.path == rel]
    assert len(problems) == 1, model.problems
    problem = problems[0]
    assert problem.line == line
    assert words in problem.reason
    text = str(problem)
    assert "\n" not in text
    assert text.startswith(rel + (f":{line}: " if line else ": "))
    assert problem.to_dict() == {"path": rel, "line": line, "reason": problem.reason}
    # the bad file never stops the good one from loading
    assert "projects/p/memory/fine.md" in {n.rel for n in model.entries}
    assert rel not in {n.rel for n in model.notes}


def test_all_bad_files_together_leave_every_good_file_loaded(make_vault: MakeVault) -> None:
    files: dict[str, str | bytes] = {f"projects/p/memory/{b[0]}": b[1] for b in BAD_FILES}
    files.update(
        {f"projects/p/memory/good{i}.md": GOOD.replace("good", f"good{i}") for i in range(5)}
    )
    vault = make_vault(files)
    model = load_vault(vault)
    assert {p.path for p in model.problems} == {f"projects/p/memory/{b[0]}" for b in BAD_FILES}
    good = {n.rel for n in model.entries if n.rel.startswith("projects/p/memory/good")}
    assert len(good) == 5


def test_python_tags_are_problems_and_never_run(make_vault: MakeVault, tmp_path: Path) -> None:
    created = tmp_path / "created-by-yaml"
    touched = tmp_path / "touched-by-os-system"
    evil = f"---\nname: evil\nx: !!python/object/apply:builtins.open [{str(created)!r}, 'w']\n---\n"
    evil2 = f"---\nname: evil2\ny: !!python/object/apply:os.system ['touch {touched}']\n---\n"
    evil3 = "---\nname: evil3\nz: !!python/object/new:os.system ['true']\n---\n"
    evil4 = "---\nname: evil4\nw: !!python/name:os.system\n---\n"
    vault = make_vault(
        {
            "projects/p/memory/evil.md": evil,
            "projects/p/memory/evil2.md": evil2,
            "projects/p/memory/evil3.md": evil3,
            "projects/p/memory/evil4.md": evil4,
        }
    )
    problems = problems_by_path(vault)
    assert not created.exists()
    assert not touched.exists()
    for rel in ("evil", "evil2", "evil3", "evil4"):
        problem = problems[f"projects/p/memory/{rel}.md"]
        assert problem.line == 3
        assert "could not determine a constructor" in problem.reason
        assert "python/" in problem.reason


def test_state_trash_obsidian_and_hidden_folders_are_not_entries(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "state/note.md": GOOD,
            ".trash/20260101/old.md": GOOD,
            ".obsidian/snippets/x.md": GOOD,
            ".git/info/x.md": GOOD,
            "projects/p/.hidden/x.md": GOOD,
            "projects/p/memory/.draft.md": GOOD,
            "state/broken.md": b"\x00binary",
            # only the vault's own state/ is runtime state; a project may be called state
            "projects/state/memory/kept.md": GOOD,
        }
    )
    model = load_vault(vault)
    rels = {n.rel for n in model.notes}
    assert not any(r.startswith(("state/", ".trash/", ".obsidian/", ".git/")) for r in rels)
    assert "projects/p/.hidden/x.md" not in rels
    assert "projects/p/memory/.draft.md" not in rels
    assert "projects/state/memory/kept.md" in rels
    assert model.problems == ()  # state/broken.md is not even looked at


def test_fifo_named_md_is_a_problem_not_a_hang(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/p/memory/fine.md": GOOD})
    os.mkfifo(vault / "projects/p/memory/pipe.md")
    model = load_vault(vault)
    assert problems_by_path(vault)["projects/p/memory/pipe.md"].reason == "not a regular file"
    assert "projects/p/memory/fine.md" in {n.rel for n in model.entries}


def test_broken_symlink_is_a_problem(make_vault: MakeVault) -> None:
    vault = make_vault()
    (vault / "projects" / "gone.md").symlink_to(vault / "nowhere.md")
    assert "cannot read" in problems_by_path(vault)["projects/gone.md"].reason


def test_yaml_error_line_counts_newlines_only() -> None:
    # U+2028 is a line break to YAML but not to editors or grep
    text = "---\nname: x\ndescription: a\u2028b\nlabel: : bad\n---\n"
    from vaultkeeper.store.model import ParseError

    with pytest.raises(ParseError) as info:
        parse_note(Path("x.md"), "x.md", text)
    assert info.value.line == 4


def test_empty_frontmatter_is_an_entry_with_no_keys() -> None:
    note = parse_note(Path("x.md"), "x.md", "---\n---\nbody\n")
    assert note.is_entry
    assert dict(note.meta) == {}
    assert note.body == "body\n"
    assert note.body_line == 3


def test_dots_close_frontmatter_and_key_lines_skip_flow_continuations() -> None:
    text = "---\nname: x\nrelations: {a: 1,\nb: 2}\n...\nbody\n"
    note = parse_note(Path("x.md"), "x.md", text)
    assert note.meta["relations"] == {"a": 1, "b": 2}
    assert note.frontmatter is not None
    assert dict(note.frontmatter.key_lines) == {"name": 2, "relations": 3}


def test_parse_date_accepts_iso_dates_only() -> None:
    assert parse_date("2026-09-02") == dt.date(2026, 9, 2)
    assert parse_date(" 2026-09-02 ") == dt.date(2026, 9, 2)
    assert parse_date(dt.date(2026, 9, 2)) == dt.date(2026, 9, 2)
    aware = dt.datetime(2026, 9, 2, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2)))
    assert parse_date(aware) == dt.date(2026, 9, 3)  # in UTC
    for bad in ("2026-02-30", "20260902", "2026-W36-3", "yesterday", "", None, 20260902):
        assert parse_date(bad) is None


def test_split_lines_splits_on_newline_only() -> None:
    assert split_lines("a\r\nb\u2028c\x0cd\nlast") == ["a\r\n", "b\u2028c\x0cd\n", "last"]
    assert split_lines("a\n") == ["a\n"]
    assert split_lines("") == []


def test_is_memory_path() -> None:
    assert is_memory_path("projects/api/memory/x.md")
    assert is_memory_path("projects/api/memory/sub/x.md")
    assert not is_memory_path("projects/api/research/x.md")
    assert not is_memory_path("projects/memory/x.md")
    assert not is_memory_path("memory/a/b.md")


def test_registry_blocks_load_with_the_model(make_vault: MakeVault) -> None:
    registry = (
        "# Pattern registry\n\n### alpha\n**success count:** 3\n**last used:** 2026-08-26\n\n"
        "### beta\n**success count:** 0\n**last used:** 2026-01-02\n"
    )
    vault = make_vault({"patterns/registry.md": registry})
    blocks, problems = load_registry(vault)
    assert problems == []
    assert [(b.name, b.count, b.last_used, b.line) for b in blocks] == [
        ("alpha", 3, dt.date(2026, 8, 26), 3),
        ("beta", 0, dt.date(2026, 1, 2), 7),
    ]
    # the registry file itself is a note without frontmatter, not an entry
    model = load_vault(vault)
    assert "patterns/registry.md" in {n.rel for n in model.notes}
    assert "patterns/registry.md" not in {n.rel for n in model.entries}


# -- the frontmatter split jumps between candidate lines; it finds what a line loop finds --

SPLIT_PIECES = ["---", "...", "----", "--- ", "---\t", "---\r", "...x", "- --", "a: 1", "", " "]
SPLIT_PIECES += ["\x0c", "\x85", "\u2028", "\u3000", "---\u00a0", "#"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.sampled_from(SPLIT_PIECES), max_size=12))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines)
    return text + end if draw(st.booleans()) else text


@settings(max_examples=2000, deadline=None)
@given(documents())
def test_split_frontmatter_equals_the_line_loop(text: str) -> None:
    def outcome(split: Callable[[str], tuple[str | None, int, int]]) -> object:
        try:
            return split(text)
        except ParseError as exc:
            return ("error", exc.reason, exc.line)

    assert outcome(split_frontmatter) == outcome(reference.split_frontmatter)


@pytest.mark.corpora
def test_split_frontmatter_agrees_on_real_files() -> None:
    paths = sorted(SAMPLE_VAULT.rglob("*.md")) + sorted((corpus()).rglob("*.md"))
    assert len(paths) > 100
    for path in paths:
        text = path.read_bytes().decode("utf-8", "replace")
        assert split_frontmatter(text) == reference.split_frontmatter(text), path


BOMB_PATH = "projects/p/memory/bomb.md"


BOMB_REASON = "bad YAML frontmatter: an alias (*name) repeats a list or mapping"


def bomb() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    keys = "name: *a9\ndescription: *a9\ntype: feedback\nstatus: *a9\nholdout_until: *a9\n"
    return "---\n" + "\n".join(lines) + "\n" + keys + "---\nbody\n"


@pytest.fixture
def bomb_vault(make_vault: MakeVault) -> Path:
    return make_vault({BOMB_PATH: bomb()})


def test_the_document_is_small_but_aliased() -> None:
    assert len(bomb()) < 700
    with pytest.raises(ParseError) as err:
        load_yaml(bomb().split("---\n")[1])
    assert err.value.reason.startswith(BOMB_REASON)
    assert err.value.line == 3  # the first line that uses an alias


def test_recursive_alias_is_refused_and_plain_scalars_are_not() -> None:
    with pytest.raises(ParseError):
        load_yaml("a: &x [1, *x]\n")
    assert load_yaml("a: &x hello\nb: *x\nc: 2 * 3\n") == {"a": "hello", "b": "hello", "c": "2 * 3"}
    assert load_yaml("a: [1, 2]\nb: [1, 2]\n") == {"a": [1, 2], "b": [1, 2]}


def test_lint_reports_the_file(bomb_vault: Path) -> None:
    result = run_vaultkeeper(bomb_vault, "lint")
    assert result.returncode == 1, result.stderr
    assert f"{BOMB_PATH}:3:1: VK001 {BOMB_REASON}" in result.stdout


def test_scan_and_report_carry_the_problem(bomb_vault: Path) -> None:
    result = run_vaultkeeper(bomb_vault, "scan", "--force")
    assert result.returncode == 0, result.stderr
    assert f"{BOMB_PATH}:3: {BOMB_REASON}" in result.stdout + result.stderr


def test_status_fails_on_the_lint_error(bomb_vault: Path) -> None:
    run_vaultkeeper(bomb_vault, "lint")  # status shows the last whole-vault lint's figures
    result = run_vaultkeeper(bomb_vault, "status")
    assert result.returncode == 1, result.stderr
    row = next(line for line in result.stdout.splitlines() if "lint errors" in line)
    assert row.split()[:4] == ["fail", "lint", "errors", "1"]


def test_index_lists_the_file_and_warns(bomb_vault: Path) -> None:
    result = run_vaultkeeper(bomb_vault, "index")
    assert result.returncode == 0, result.stderr
    assert f"warning: {BOMB_PATH}:3: {BOMB_REASON}" in result.stderr
    assert "[[projects/p/memory/bomb]]" in (bomb_vault / "_index.md").read_text()


def test_new_creates_the_entry_and_warns(bomb_vault: Path) -> None:
    args = ("new", "memory", "other", "-p", "p", "-d", "another lesson")
    result = run_vaultkeeper(bomb_vault, *args)
    assert result.returncode == 0, result.stderr
    assert (bomb_vault / "projects/p/memory/other.md").is_file()
    assert f"warning: {BOMB_PATH}:3: {BOMB_REASON}" in result.stderr


def test_revalidate_defers_with_the_reason(bomb_vault: Path) -> None:
    before = (bomb_vault / BOMB_PATH).read_bytes()
    evidence = ("--pass", "--evidence", "https://example.org/x")
    result = run_vaultkeeper(bomb_vault, "apply", "revalidate", BOMB_PATH, *evidence)
    assert result.returncode == 1
    assert f"{BOMB_PATH}:3: {BOMB_REASON}" in result.stderr
    assert "Traceback" not in result.stderr
    assert (bomb_vault / BOMB_PATH).read_bytes() == before
