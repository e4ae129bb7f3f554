"""bench/run.py: headline figures only from a clean install, and the README's table.

No timing is asserted here (that is what the benchmark is for): these tests check that
the benchmark refuses an editable or stale install and what it writes where.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest

from tests.conftest import REPO
from vaultkeeper import config

sys.path.insert(0, str(REPO / "bench"))
import install  # noqa: E402
import run  # noqa: E402
from figures import Row  # noqa: E402

STARTED = dt.datetime(2026, 12, 1, 2, 0, tzinfo=dt.timezone.utc)


def _editable() -> bool:
    direct = distribution(config.DIST_NAME).read_text("direct_url.json")
    return bool(direct and json.loads(direct).get("dir_info", {}).get("editable"))


@pytest.mark.skipif(not _editable(), reason="the suite runs from a plain install")
def test_an_editable_install_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--no-write", "--only", "noop"]) == 2  # before any measuring
    err = capsys.readouterr().err
    assert "vaultkeeper is an editable install (pip install -e)" in err
    assert "run bench/clean-run.sh (or pass --allow-unclean)" in err


def test_a_stale_install_names_the_files_that_differ(tmp_path: Path) -> None:
    source, installed = tmp_path / "src", tmp_path / "site"
    for top in (source, installed):
        (top / "sub" / "__pycache__").mkdir(parents=True)
        (top / "same.py").write_text("x = 1\n")
        (top / "sub" / "__pycache__" / "junk.py").write_text(str(top))  # ignored
    (source / "sub" / "new.py").write_text("")
    (source / "edited.py").write_text("a\n")
    (installed / "edited.py").write_text("b\n")
    (installed / "gone.py").write_text("")
    (source / "data.txt").write_text("not code")
    assert install.changed(source, installed) == ["edited.py", "gone.py", "sub/new.py"]


def rows() -> list[Row]:
    cold = "cold scan / read-every-file floor, 10k entries"
    return [
        Row(cold, "a", "b", 1.9, "1.90x", 2.0, "<= 2.0x"),
        Row("throttled no-op / bare interpreter start", "a", "b", 2.2, "2.20x", 2.0, "<= 2.0x"),
        Row("cold scan / python-frontmatter loop, 10k entries", "skipped", "", 0.0, "-", None),
    ]  # fmt: skip


def test_the_readme_table_is_replaced_between_its_markers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = tmp_path / "README.md"
    before, after = "# Title\n\n## Performance\n\nintro\n", "\nmore text\n\n## Next\n"
    readme.write_text(before + f"{run.README_START}\nold\n{run.README_END}" + after)
    monkeypatch.setattr(run, "README", readme)
    assert run.write_readme(run.readme_table(rows(), STARTED, []))
    text = readme.read_text()
    assert text.startswith(before) and text.endswith(after) and "\nold\n" not in text
    assert (
        "| full `scan --force` after a session's edits / reading every `.md` file's bytes "
        "| 1.90x | <= 2.0x | met |" in text
    )
    assert "| 2.20x | <= 2.0x | missed by 10% |" in text
    assert "frontmatter.load" not in text  # a skipped row is left out
    assert "Not a headline run" not in text
    run.write_readme(run.readme_table(rows(), STARTED, ["vaultkeeper is an editable install"]))
    assert "**Not a headline run**: vaultkeeper is an editable install." in readme.read_text()


def test_the_real_readme_has_the_markers_once() -> None:
    text = (REPO / "README.md").read_text()
    assert text.count(run.README_START) == 1 and text.count(run.README_END) == 1
    assert text.index(run.README_START) > text.index("## Performance")


def test_the_page_says_how_it_was_installed() -> None:
    page = run.render(rows(), [], [], STARTED, 60.0)
    assert "not an editable install" in page and "Not a headline run" not in page
    unclean = run.render(rows(), [], [], STARTED, 60.0, ["vaultkeeper is an editable install"])
    assert unclean.count("Not a headline run") == 1 and "NOT CLEAN" in unclean


def test_a_run_rewrites_its_own_sections_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "benchmarks.md"
    monkeypatch.setattr(run, "DOC", doc)
    page = run.render(rows(), [], ["- a note"], STARTED, 60.0)
    assert run.with_kept(page) == page  # no page yet
    kept = "## search (MCP tool)\n\nits figures\n\n## Code anchors\n\nmore figures\n"
    doc.write_text(run.render(rows(), [], ["- an older note"], STARTED, 1.0) + "\n" + kept)
    again = run.with_kept(page)
    assert again.startswith(page.rstrip("\n")) and again.endswith(kept)
    assert "an older note" not in again and again.count("## Notes on this run") == 1
