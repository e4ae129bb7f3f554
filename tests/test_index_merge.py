"""indexmerge: the generated list of an index file merged entry by entry, keyed by link."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vaultkeeper import config
from vaultkeeper.index.build import build_index
from vaultkeeper.index.merge import is_index_path, merge_index_bytes, merge_index_files
from vaultkeeper.registry.merge import git_merge_file

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git merge-file")
TOP = "# Index\n\nStart here.\n\n"
ALPHA = "- [[notes/alpha]] - Alpha"
BETA = "- [[notes/beta]] - Beta"
GAMMA = "- [[notes/gamma]] - Gamma"
ROOTED = "- [[readme]] - At the root"
RULE = "- [[patterns/registry#rule]] - A rule"


def index(*lines: str, top: str = TOP, bottom: str = "") -> str:
    body = "".join(f"{line}\n" for line in lines)
    return f"{top}{config.INDEX_START}\n{body}{config.INDEX_END}\n{bottom}"


def merge(base: str, ours: str, theirs: str) -> tuple[str, int]:
    result = merge_index_bytes(*(t.encode("utf-8") for t in (base, ours, theirs)))
    assert result.notes == ()
    return result.text.decode("utf-8"), result.conflicts


def plain(base: str, ours: str, theirs: str) -> tuple[str, int]:
    """What git merge-file makes of the whole files (the fallback)."""
    text, conflicts = git_merge_file(*(t.encode("utf-8") for t in (ours, base, theirs)))
    return text.decode("utf-8"), conflicts


def test_entries_added_on_both_sides_are_all_kept_in_order() -> None:
    base = index("## notes", BETA)
    ours = index("## notes", ALPHA, BETA)
    theirs = index("## (root)", ROOTED, "## notes", BETA, GAMMA)
    assert merge(base, ours, theirs) == (
        index("## (root)", ROOTED, "## notes", ALPHA, BETA, GAMMA),
        0,
    )


def test_the_same_spot_added_on_both_sides_is_a_git_conflict_but_not_here() -> None:
    base = index("## notes", ALPHA)
    ours = index("## notes", ALPHA, BETA)
    theirs = index("## notes", ALPHA, GAMMA)
    assert plain(base, ours, theirs)[1] == 1
    assert merge(base, ours, theirs) == (index("## notes", ALPHA, BETA, GAMMA), 0)


def test_a_deletion_and_an_addition_next_to_it_both_happen() -> None:
    base = index("## notes", ALPHA, BETA, "## patterns", RULE)
    ours = index("## notes", BETA, "## patterns", RULE)  # alpha pruned
    theirs = index("## notes", ALPHA, "- [[notes/alpha2]] - A2", BETA, "## patterns", RULE)
    merged = index("## notes", "- [[notes/alpha2]] - A2", BETA, "## patterns", RULE)
    assert merge(base, ours, theirs) == (merged, 0)
    # deleting the last entry of a group takes its heading with it
    assert merge(base, base, index("## notes", ALPHA, BETA)) == (index("## notes", ALPHA, BETA), 0)


def test_a_change_on_one_side_takes_that_line_keywords_included() -> None:
    changed = "- [[notes/beta]] - Beta, better said -- keywords: b, second"
    base = index("## notes", ALPHA, BETA)
    ours = index("## notes", ALPHA, changed)
    theirs = index("## notes", ALPHA, BETA, GAMMA)
    assert merge(base, ours, theirs) == (index("## notes", ALPHA, changed, GAMMA), 0)
    assert merge(base, theirs, ours) == (index("## notes", ALPHA, changed, GAMMA), 0)


def test_an_entry_moved_to_another_group_on_one_side() -> None:
    base = index("## notes", ALPHA, BETA)
    moved = "- [[notes/beta]] - Beta"
    ours = index("## archive", moved, "## notes", ALPHA)
    theirs = index("## notes", ALPHA, BETA, GAMMA)
    assert merge(base, ours, theirs) == (index("## archive", moved, "## notes", ALPHA, GAMMA), 0)


@pytest.mark.parametrize(
    "ours_line, theirs_line",
    [
        ("- [[notes/beta]] - Beta (ours)", "- [[notes/beta]] - Beta (theirs)"),
        (None, "- [[notes/beta]] - Beta (theirs)"),  # deleted on one, changed on the other
    ],
)
def test_an_entry_changed_differently_on_both_is_the_plain_merge(
    ours_line: str | None, theirs_line: str
) -> None:
    base = index("## notes", ALPHA, BETA)
    ours = index("## notes", ALPHA, *([ours_line] if ours_line else []), GAMMA)
    theirs = index("## notes", ALPHA, theirs_line)
    merged, conflicts = merge(base, ours, theirs)
    assert (merged, conflicts) == plain(base, ours, theirs)
    assert conflicts == 1 and "<<<<<<< ours\n" in merged and ">>>>>>> theirs\n" in merged


def test_text_outside_the_markers_is_merged_as_git_merges_text() -> None:
    base = index("## notes", ALPHA)
    ours = index("## notes", ALPHA, BETA, top=TOP.replace("Start here.", "Start here, a."))
    theirs = index("## notes", ALPHA, GAMMA, bottom="\nA note below.\n")
    merged = index(
        "## notes",
        ALPHA,
        BETA,
        GAMMA,
        top=TOP.replace("Start here.", "Start here, a."),
        bottom="\nA note below.\n",
    )
    assert merge(base, ours, theirs) == (merged, 0)
    # the same line outside changed on both sides: conflict markers there, the list merged
    theirs = index("## notes", ALPHA, GAMMA, top=TOP.replace("Start here.", "Start, b."))
    text, conflicts = merge(base, ours, theirs)
    assert conflicts == 1
    assert "<<<<<<< ours\nStart here, a.\n=======\nStart, b.\n>>>>>>> theirs\n" in text
    assert text.endswith(index("## notes", ALPHA, BETA, GAMMA, top=""))


@pytest.mark.parametrize(
    "odd",
    [
        ["A line a person wrote", "## notes", ALPHA],  # text before any heading
        ["## notes", ALPHA, "", BETA],  # a blank line
        ["## notes", BETA, ALPHA],  # out of order
        ["## notes", ALPHA, ALPHA],  # listed twice
        ["## notes", "* [[notes/alpha]] - Alpha"],  # another bullet
        ["## notes", ALPHA, "## notes", GAMMA],  # a group twice
        ["## notes", "- [[notes/alpha]] - "],  # a dash and no description
        ["## notes", "- [[notes/alpha]]  - Alpha"],  # two blanks before the dash
    ],
)
def test_a_list_not_in_vaultkeepers_format_is_the_plain_merge(odd: list[str]) -> None:
    base = index("## notes", ALPHA)
    ours = index(*odd)
    theirs = index("## notes", ALPHA, GAMMA)
    assert merge(base, ours, theirs) == plain(base, ours, theirs)
    assert merge(base, theirs, ours) == plain(base, theirs, ours)


def test_markers_missing_or_doubled_is_the_plain_merge() -> None:
    base = index("## notes", ALPHA)
    theirs = index("## notes", ALPHA, GAMMA)
    for ours in (TOP, base + base, base.replace(config.INDEX_END, "")):
        assert merge(base, ours, theirs) == plain(base, ours, theirs)


def test_added_on_both_sides_with_no_base() -> None:
    ours = index("## notes", ALPHA)
    theirs = index("## notes", GAMMA)
    assert plain("", ours, theirs)[1] == 1
    assert merge("", ours, theirs) == (index("## notes", ALPHA, GAMMA), 0)


def test_crlf_and_bom_are_kept() -> None:
    bom = b"\xef\xbb\xbf"

    def crlf(text: str) -> bytes:
        return text.replace("\n", "\r\n").encode("utf-8")

    base = crlf(index("## notes", BETA))
    ours = bom + crlf(index("## notes", ALPHA, BETA))
    theirs = crlf(index("## notes", BETA, GAMMA))
    result = merge_index_bytes(base, ours, theirs)
    assert (result.text, result.conflicts) == (bom + crlf(index("## notes", ALPHA, BETA, GAMMA)), 0)
    latin = index("## notes", "- [[notes/caf\xe9]] - x").encode("latin-1")
    result = merge_index_bytes(base, latin, theirs)  # not UTF-8: git's merge of the bytes
    assert (result.text, result.conflicts) == git_merge_file(latin, base, theirs)


def test_the_merge_is_what_vaultkeeper_index_writes(make_vault) -> None:
    def note(description: str) -> str:
        return f"---\ndescription: {description}\n---\nbody\n"

    seed = {
        "notes/alpha.md": note("Alpha"),
        "notes/beta.md": note("Beta -- keywords: in the description"),
        "patterns/registry.md": "### rule\nA rule\n\n**success count:** 1\n",
    }
    ours_files = {**seed, "notes/alpha2.md": note("Alpha two"), "readme.md": note("Root")}
    theirs_files = {k: v for k, v in seed.items() if k != "notes/beta.md"}
    theirs_files["patterns/registry.md"] += "\n### rule2\nAnother rule\n"
    both = {**theirs_files, "notes/alpha2.md": note("Alpha two"), "readme.md": note("Root")}
    texts = []
    for files in (seed, ours_files, theirs_files, both):
        vault = make_vault(files)
        build_index(vault)
        texts.append((vault / config.INDEX_FILE).read_text(encoding="utf-8"))
    base, ours, theirs, expected = texts
    assert plain(base, ours, theirs)[1] == 1  # git alone stops here
    assert merge(base, ours, theirs) == (expected, 0)
    assert merge(base, theirs, ours) == (expected, 0)


def test_a_split_root_index_merges_its_sub_index_lines(make_vault) -> None:
    def sub(folder: str, count: int) -> str:
        return f"- [[_index-{folder}]] - {folder}/: {count} entries"

    base = index("## (root)", ROOTED, "## sub-indexes", sub("notes", 2), sub("projects", 9))
    ours = index("## (root)", ROOTED, "## sub-indexes", sub("notes", 3), sub("projects", 9))
    theirs = index("## sub-indexes", sub("notes", 2), sub("projects", 10))
    merged = index("## sub-indexes", sub("notes", 3), sub("projects", 10))
    assert plain(base, ours, theirs)[1] == 1
    assert merge(base, ours, theirs) == (merged, 0)


def test_the_files_version_writes_ours(tmp_path: Path) -> None:
    names = {"base": index("## notes", BETA), "ours": index("## notes", ALPHA, BETA)}
    names["theirs"] = index("## notes", BETA, GAMMA)
    paths = {}
    for name, text in names.items():
        paths[name] = tmp_path / name
        paths[name].write_text(text, encoding="utf-8")
    result = merge_index_files(paths["base"], paths["ours"], paths["theirs"])
    assert result.conflicts == 0
    assert paths["ours"].read_text(encoding="utf-8") == index("## notes", ALPHA, BETA, GAMMA)


def test_which_paths_are_index_files() -> None:
    yes = ("_index.md", "_index/_index-projects.md", "vault/_index/_index-patterns.md")
    yes += ("_index-projects.md", "vault/_index.md", "vault/_index-patterns.md")  # older layout
    no = (None, "", "patterns/registry.md", "patterns/_index.md", "notes/x.md", "_index.txt")
    assert all(is_index_path(p) for p in yes)
    assert not any(is_index_path(p) for p in no)


def test_the_driver_command_dispatches_on_the_path(tmp_path: Path) -> None:
    names = {"base": index("## notes", ALPHA), "ours": index("## notes", ALPHA, BETA)}
    names["theirs"] = index("## notes", ALPHA, GAMMA)
    args = []
    for name, text in names.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        args.append(str(tmp_path / name))
    program = shutil.which("vaultkeeper")
    assert program is not None
    done = subprocess.run([program, "merge-driver", *args, "_index.md"], capture_output=True)
    assert (done.returncode, done.stderr) == (0, b"")
    assert (tmp_path / "ours").read_text(encoding="utf-8") == index("## notes", ALPHA, BETA, GAMMA)
    (tmp_path / "ours").write_text(names["ours"], encoding="utf-8")
    done = subprocess.run([program, "merge-driver", *args, "notes.md"], capture_output=True)
    assert done.returncode == 1  # not an index file: the registry merge, git's conflict
