"""The full-text index in state/vaultkeeper.db (vaultkeeper/search/index.py): what it
holds, how it stays true (stat keys; a command's writes), and who builds it."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, recall_on, run_vaultkeeper
from tests.test_recall_moment import CLAUDE, context, paths_in, recorded, run
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index
from vaultkeeper.recall import moment as recall_lookup
from vaultkeeper.search import index as lookup
from vaultkeeper.search.index import anchor_file
from vaultkeeper.search.rank import Searcher
from vaultkeeper.store import db
from vaultkeeper.store.globs import glob_matches

ENTRY = "---\nname: {name}\ndescription: {d}\nstatus: {s}\n{extra}---\n\nBody of {name}.\n"
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def entry(name: str, d: str = "a lesson", s: str = "active", extra: str = "") -> str:
    return ENTRY.format(name=name, d=d, s=s, extra=extra)


def rows(vault: Path, where: str = "lesson = 1") -> list[tuple[str, str | None]]:
    """(path, project) of the index's entries, by path."""
    with db.connect(vault) as conn:
        got = conn.execute(f"SELECT path, project FROM search_entries WHERE {where} ORDER BY path")
        return [(p, proj) for p, proj in got]


def served(vault: Path, prompt: str, session: str) -> list[str]:
    payload = recorded(CLAUDE, "02-UserPromptSubmit.json", prompt=prompt, session_id=session)
    code, out, _ = run(vault, payload)
    assert code == 0
    return paths_in(context(out, "UserPromptSubmit")) if out else []


def test_the_scan_keeps_one_row_per_entry_once_asked(make_vault: MakeVault) -> None:
    root = recall_on(
        make_vault(
            {
                "projects/api/memory/live.md": entry("live", extra="paths: src/**/*.py\n"),
                "projects/api/memory/gone.md": entry("gone", s="archived"),
                "projects/api/research/survey.md": entry("survey"),
                "patterns/registry.md": "# Registry\n\n### pin-clock\n**success count:** 1\n"
                "**last used:** 2026-01-01\n\nPin the clock.\n",
                "notes/plain.md": "no frontmatter: not an entry\n",
            }
        )
    )
    done = run_vaultkeeper(root, "scan", "--force")
    assert done.returncode == 0, done.stderr
    assert rows(root, "1") == [
        ("patterns/registry.md", None),
        ("projects/api/memory/gone.md", "api"),
        ("projects/api/memory/live.md", "api"),
        ("projects/api/research/survey.md", "api"),
        ("references/vault-spec.md", None),  # the spec init writes
    ]
    assert rows(root, "lesson = 1 AND live = 1") == [("projects/api/memory/live.md", "api")]
    with db.connect(root) as conn:
        assert conn.execute("SELECT glob FROM search_globs").fetchall() == [("src/**/*.py",)]
        files = {p for (p,) in conn.execute("SELECT path FROM search_files")}
    assert "notes/plain.md" in files  # stat'ed, never read again while unchanged


def test_a_vault_without_the_recall_keeps_no_index_until_asked(make_vault: MakeVault) -> None:
    from vaultkeeper.recall.moment import Quiet, serve

    root = make_vault({"projects/api/memory/a.md": entry("a", "retry flaky jobs once")})
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    with db.connect(root) as conn:
        assert not lookup.is_on(conn)
        assert conn.execute("SELECT count(*) FROM search_entries").fetchone() == (0,)
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "flaky"}
    with pytest.raises(Quiet, match="the next scan builds it"):
        serve(str(root), "claude-code", payload, float("inf"))
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0  # the hook asked
    assert rows(root) == [("projects/api/memory/a.md", "api")]


def test_unchanged_files_are_not_read_and_a_hand_edit_is_picked_up(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault({"projects/api/memory/a.md": entry("a", "zebra words")})
    monkeypatch.setattr(lookup, "RACY_NS", 0)  # every file settled once stat'ed
    with db.connect(root) as conn:
        assert lookup.refresh(conn, root) >= 1
        assert lookup.refresh(conn, root) == 0  # stats only: nothing read
        (root / "projects/api/memory/a.md").write_text(entry("a", "quokka words"))
        (root / "projects/api/memory/b.md").write_text(entry("b", "wombat"))
        assert lookup.refresh(conn, root) == 2
    assert [h.name for h in Searcher(root).search("quokka")] == ["a"]
    assert Searcher(root).search("zebra") == []
    (root / "projects/api/memory/b.md").unlink()
    assert Searcher(root).search("wombat") == []  # gone with its file


def test_deleting_the_database_loses_nothing(make_vault: MakeVault) -> None:
    root = make_vault(
        {
            "projects/api/memory/a.md": entry("cursor-pages", "paginate with cursors"),
            "projects/api/memory/b.md": entry("utc", "store timestamps in UTC"),
        }
    )
    before = [(h.path, h.line, h.snippet) for h in Searcher(root).search("cursors pagination")]
    assert before
    path = db.path_of(root)
    for name in (path.name, *(path.name + c for c in db.COMPANIONS)):
        path.with_name(name).unlink(missing_ok=True)
    after = [(h.path, h.line, h.snippet) for h in Searcher(root).search("cursors pagination")]
    assert after == before


@pytest.mark.parametrize(
    "query",
    ["name : x", "NEAR(a b)", '"unbalanced', "a* OR b", "(((", "AND", "x -y ^z", "{name}: c"],
)
def test_query_words_are_never_fts5_syntax(make_vault: MakeVault, query: str) -> None:
    root = make_vault({"projects/api/memory/a.md": entry("name", "x near a b c z")}, init=False)
    hits = Searcher(root).search(query)  # no sqlite3 error, the words matched as words
    assert [h.name for h in hits] in ([], ["name"])
    assert [h.name for h in Searcher(root).search(query + " near")] == ["name"]


def test_stemming_and_field_weights(make_vault: MakeVault) -> None:
    root = make_vault(
        {
            "projects/api/memory/a.md": entry("retries", "what to do", extra=""),
            "projects/api/memory/b.md": entry("other", "notes on retrying a job"),
            "projects/api/memory/c.md": "---\nname: third\ndescription: misc\n---\n\n"
            "Once we retried everything.\n",
        },
        init=False,
    )
    got = [h.name for h in Searcher(root).search("retry")]
    assert got == ["retries", "other", "third"]  # stemmed; name over description over body


@pytest.mark.parametrize(
    ("place", "file"),
    [
        ("src/billing/cart.py", "src/billing/cart.py"),
        ("src/billing/cart.py::round_cart", "src/billing/cart.py"),
        ('src/billing/config.py: ROUNDING = "half-even"', "src/billing/config.py"),
        ({"at": "./src/billing/", "digest": "x"}, "src/billing"),
        ({"path": "lib/a.ts::A.b", "commit": "abc"}, "lib/a.ts"),
        ("/etc/passwd", None),
        ("../outside.py", None),
        (42, None),
    ],
)
def test_an_anchor_gives_its_file_part(place: object, file: str | None) -> None:
    assert anchor_file(place) == file


def test_anchor_shapes_in_frontmatter(make_vault: MakeVault) -> None:
    anchors = "anchors:\n  - src/a.py::f\n  - at: 'src/b.py: X = 1'\n    digest: d1\n  - src/dir/\n"
    root = make_vault({"projects/p/memory/a.md": entry("a", extra=anchors)})
    with db.connect(root) as conn:
        lookup.refresh(conn, root)
        places = sorted(p for (p,) in conn.execute("SELECT place FROM search_places"))
        assert places == ["src/a.py", "src/b.py", "src/dir"]
        index = recall_lookup.Index(str(root), conn, time.monotonic() + 60)
        index.refreshed.add("projects/p/memory/a.md")  # read in this call: trusted
        got = index.for_files(["src/dir/deep/x.py"], "p", lambda p: False, 4)
        assert [x.path for x in got] == ["projects/p/memory/a.md"]
        assert index.for_files(["src/a.py"], "other", lambda p: False, 4) == []


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "lib/a.py", False),
        ("*.md", "docs/deep/readme.md", True),
        ("src/*.ts", "src/x/a.ts", False),
        ("src/[ab].ts", "src/b.ts", True),
        ("src/[!ab].ts", "src/b.ts", False),
        ("src/?.ts", "src/ab.ts", False),
        ("**", "any/thing.py", True),
        ("src/**", "src/a/b.py", True),
    ],
)
def test_paths_globs_as_claude_rules_read_them(glob: str, path: str, hit: bool) -> None:
    assert glob_matches(glob, path) is hit


def test_the_scan_forgets_old_sessions(make_vault: MakeVault) -> None:
    root = recall_on(make_vault({"projects/api/memory/a.md": entry("a", "retry flaky jobs")}))
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    assert served(root, "retry flaky jobs", "old") == ["projects/api/memory/a.md"]
    assert served(root, "retry flaky jobs", "old") == []  # once a session
    with db.connect(root) as conn, db.writing(conn):  # served long ago
        conn.execute("UPDATE recall_served SET day = '2001-01-01' WHERE session = 'old'")
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    assert served(root, "retry flaky jobs", "old") == ["projects/api/memory/a.md"]  # forgotten


def test_hooks_install_with_recall_builds_the_index(tmp_path: Path) -> None:
    from vaultkeeper.entries.init import init_vault

    root = tmp_path / "v"
    init_vault(root)
    (root / "projects/api/memory").mkdir(parents=True)
    (root / "projects/api/memory/a.md").write_text(entry("a", "retry flaky jobs once"))
    settings = tmp_path / "settings.json"
    args = ("hooks", "install", "claude-code", "--settings", str(settings))
    assert run_vaultkeeper(root, *args).returncode == 0
    with db.connect(root) as conn:
        assert not lookup.is_on(conn)  # no --recall: no index
    done = run_vaultkeeper(root, *args, "--recall")
    assert done.returncode == 0, done.stderr
    assert rows(root) == [("projects/api/memory/a.md", "api")]


OLD = "projects/web/memory/webpack-build.md"
NEW = "projects/web/memory/vite-build.md"


def note(name: str, description: str) -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\ntype: memory\nstatus: active\n"
        f"label: rule\nprovenance: []\n---\n\n# {name}\n\nBody text.\n"
    )


def build(vault: Path) -> None:
    recall_on(vault)
    with db.connect(vault) as conn:
        lookup.refresh(conn, vault)


def test_a_superseded_lesson_is_never_served_after_the_apply(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            OLD: note("webpack-build", "bundle the frontend with webpack loaders"),
            NEW: note("vite-build", "bundle the frontend with vite plugins"),
        }
    )
    build_index(vault)
    build(vault)
    prompt = "bundle the frontend webpack loaders"
    assert served(vault, prompt, "before") == [OLD, NEW]
    done = apply_decision(
        vault,
        Decision("supersede", OLD, by=NEW, evidence=f"{NEW}:1"),
        NOW,  # type: ignore[arg-type]
    )
    assert done.outcome == "act", done.reason
    with db.connect(vault) as conn:  # marked in the apply's own step: the hook reads it again
        assert (OLD,) in conn.execute("SELECT path FROM search_pending").fetchall()
    assert served(vault, prompt, "after") == [NEW]  # no scan in between


def test_a_lesson_written_by_new_is_served_before_any_scan(make_vault: MakeVault) -> None:
    vault = make_vault({OLD: note("webpack-build", "bundle the frontend with webpack")})
    build(vault)
    prompt = "the flaky integration job retries"
    assert served(vault, prompt, "s1") == []
    result = CliRunner().invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "flaky-integration-retries", "-p", "web",
         "-d", "Retry the flaky integration job once before digging in"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert served(vault, prompt, "s2") == ["projects/web/memory/flaky-integration-retries.md"]


def test_the_index_is_never_read_through_a_link(make_vault: MakeVault, tmp_path: Path) -> None:
    from vaultkeeper.recall.moment import Quiet, serve

    root = make_vault({"projects/api/memory/a.md": entry("a", "retry flaky jobs once")})
    build(root)
    path = db.path_of(root)
    outside = tmp_path / "elsewhere.db"
    shutil.move(path, outside)
    for name in db.COMPANIONS:
        path.with_name(path.name + name).unlink(missing_ok=True)
    path.symlink_to(outside)
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "retry flaky"}
    with pytest.raises(Quiet, match="not a regular file"):
        serve(str(root), "claude-code", payload, float("inf"))


def test_the_tags_column_narrows_but_is_never_searched(make_vault: MakeVault) -> None:
    root = make_vault({"projects/api/memory/a.md": entry("a", "retry flaky jobs")}, init=False)
    assert Searcher(root).search("vklesson vkproject api vknoproject") == []
    assert [h.name for h in Searcher(root).search("retry")] == ["a"]


def test_rows_another_version_made_are_made_anew(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served texts are masked when a row is made: another vaultkeeper (other masking
    patterns) or another rows format reads every file again, and drops gone ones."""
    root = make_vault({"projects/api/memory/a.md": entry("a", "zebra")}, init=False)
    assert [h.name for h in Searcher(root).search("zebra")] == ["a"]
    (root / "projects/api/memory/a.md").unlink()
    monkeypatch.setattr(lookup, "ROWS_FORMAT", lookup.ROWS_FORMAT + 1)
    with db.connect(root) as conn:
        lookup.refresh(conn, root)
        assert conn.execute("SELECT count(*) FROM search_entries").fetchone() == (0,)
        made = conn.execute("SELECT value FROM search_meta WHERE key = 'masked_by'").fetchone()
    assert made[0].endswith(f"/{lookup.ROWS_FORMAT}")


def test_the_hook_keeps_in_step_with_the_index(tmp_path: Path) -> None:
    """The recall hook repeats two things to keep its imports light: the stat key's
    form and the rows' format."""
    some = tmp_path / "x.md"
    some.write_text("x")
    info = some.stat()
    assert db.stat_key(info, 0)[0] == recall_lookup.key_of(info)
    assert recall_lookup.ROWS_FORMAT == lookup.ROWS_FORMAT


def test_a_changed_block_is_the_only_row_made_anew(make_vault: MakeVault) -> None:
    """A ``use`` changes one block of a registry file: the file is read again, and only
    that block's row is replaced (the others keep theirs: a scan after a session stays
    cheap however big the registry)."""
    blocks = "".join(
        f"### p{n}\n**success count:** 1\n**last used:** 2026-01-01\n\nPattern {n}.\n\n"
        for n in range(5)
    )
    root = make_vault({"patterns/registry.md": "# Registry\n\n" + blocks}, init=False)

    def ids() -> dict[str, int]:
        with db.connect(root) as conn:
            lookup.refresh(conn, root)
            found = conn.execute("SELECT name, id FROM search_entries WHERE kind = 'pattern'")
            return dict(found.fetchall())

    before = ids()
    registry = root / "patterns/registry.md"
    registry.write_text(registry.read_text().replace("Pattern 2.", "Pattern zebra."))
    after = ids()
    assert sorted(after) == sorted(before) == [f"p{n}" for n in range(5)]
    assert [n for n in after if after[n] != before[n]] == ["p2"]
    assert [h.name for h in Searcher(root).search("zebra")] == ["p2"]
