"""The scripted fixture history of the anchor check: a repository, and lessons anchored at its
first commit, with the state each anchor must be found in at each later commit."""

from __future__ import annotations

from pathlib import Path

from tests.git_helper import git
from vaultkeeper.anchors import check, repo
from vaultkeeper.anchors.format import item_yaml, parse_at

FIRST = {
    "src/cart.py": "def round_cart(x):\n    return round(x, 2)\n\n\ndef old_helper(x):\n"
    "    return x\n",
    "src/legacy.py": "def legacy():\n    pass\n",
    "src/util.py": "def moved_fn(a):\n    return a * 2\n\n\ndef stays():\n    return 0\n",
    "src/config.py": 'ROUNDING_MODE = "half-even"\nCURRENCY = "EUR"\n',
    "src/fmt.py": "def format_me(a,b):\n  return a+b\n",
    "src/notes.py": "def keep():\n    pass\n\n\ndef dropped():\n    pass\n",
    "web/app.js": "function render(a) {\n  return a\n}\n\nfunction keepjs() {\n  return 1\n}\n",
    "src/oldname.py": "def in_renamed():\n    return 1\n",
}
# (commit message, files written, files deleted, git mv pairs)
STEPS = [
    ("rename a function", {"src/cart.py": FIRST["src/cart.py"].replace("old_", "new_")}, [], []),
    ("delete a file", {}, ["src/legacy.py"], []),
    (
        "move a function to another file",
        {
            "src/util.py": "def stays():\n    return 0\n",
            "src/other.py": "def moved_fn(a):\n    return a * 2\n",
        },
        [],
        [],
    ),
    (
        "change a constant",
        {"src/config.py": 'ROUNDING_MODE = "half-up"\nCURRENCY = "EUR"\n'},
        [],
        [],
    ),
    ("reformat a file", {"src/fmt.py": "def format_me(a, b):\n    return a + b\n"}, [], []),
    (
        "only mention names in comments",
        {
            "src/notes.py": "def keep():\n    pass\n\n\n# dropped() used to live here\n",
            "web/app.js": "// render(a) was here; see function render in git history\n\n"
            "function keepjs() {\n  return 1\n}\n",
        },
        [],
        [],
    ),
    ("rename a file", {}, [], [("src/oldname.py", "src/newname.py")]),
]
# anchor -> (first step where it is no longer ok (1-based; 0: never), the state then)
EXPECTED = {
    "src/cart.py::old_helper": (1, "gone"),
    "src/cart.py::round_cart": (0, "ok"),
    "src/cart.py": (1, "changed"),
    "src/legacy.py": (2, "gone"),
    "src/legacy.py::legacy": (2, "gone"),
    "src/util.py::moved_fn": (3, "moved"),
    "src/util.py::stays": (0, "ok"),
    'src/config.py: ROUNDING_MODE = "half-even"': (4, "changed"),
    "src/config.py::ROUNDING_MODE": (4, "changed"),
    "src/config.py::CURRENCY": (0, "ok"),
    "src/fmt.py::format_me": (0, "ok"),
    "src/fmt.py": (0, "ok"),
    "src/notes.py::dropped": (6, "gone"),
    "src/notes.py::keep": (0, "ok"),
    "web/app.js::render": (6, "gone"),
    "web/app.js::keepjs": (0, "ok"),
    "src/oldname.py": (7, "moved"),
    "src/oldname.py::in_renamed": (7, "moved"),
}


def expected_at(step: int) -> dict[str, str]:
    return {
        at: (state if since and step >= since else "ok") for at, (since, state) in EXPECTED.items()
    }


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def build_repo(root: Path, first: str = "first") -> list[str]:
    """The history; the commit ids, first to last. Two repositories built within one
    second share their root commit (one identity) unless ``first`` tells them apart."""
    root.mkdir()
    git(root, "init", "-q")
    write(root, FIRST)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", first)
    commits = [git(root, "rev-parse", "HEAD").stdout.strip()]
    for message, files, deleted, moves in STEPS:
        write(root, files)
        for rel in deleted:
            git(root, "rm", "-q", rel)
        for old, new in moves:
            git(root, "mv", old, new)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
        commits.append(git(root, "rev-parse", "HEAD").stdout.strip())
    return commits


def build_vault(vault: Path, top: Path, held_out: str = "gone: src/cart.py::old_helper") -> None:
    """A vault whose project "shop" is tied to ``top``, one active lesson per anchor of
    EXPECTED (anchored at the checked-out commit) and one held-out lesson whose
    falsification condition is an anchor check."""
    memory = vault / "projects" / "shop" / "memory"
    memory.mkdir(parents=True)
    (vault / "state").mkdir()
    (vault / "_index.md").write_text("# Index\n", encoding="utf-8")
    assert repo.tie(vault, "shop", str(top)) is not None
    for n, at in enumerate(EXPECTED, 1):
        digest, commit = check.record(str(top), parse_at(at))
        (memory / f"lesson-{n:02d}.md").write_text(
            f"---\nname: lesson-{n:02d}\ndescription: about {at.split(':')[0]}\n"
            "type: memory\nstatus: active\nlabel: fact\nanchors:\n"
            f"{item_yaml(at, digest, commit)}\n---\n\nA lesson.\n",
            encoding="utf-8",
        )
    (memory / "held.md").write_text(
        "---\nname: held\ndescription: the helper is needed\ntype: memory\nstatus: held_out\n"
        f'label: inferred\nholdout_until: "2026-01-01"\nfalsification_condition: "{held_out}"\n'
        "---\n\nHeld out.\n",
        encoding="utf-8",
    )
