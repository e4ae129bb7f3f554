"""The anchors: format: what an item may say, and lint VK206 on what it may not."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultkeeper.anchors.format import (
    DEFINITION,
    FILE,
    TEXT,
    AnchorError,
    parse_at,
    parse_condition,
    parse_items,
)
from vaultkeeper.lint.run import lint_vault


def test_the_three_kinds() -> None:
    assert parse_at("src/billing/cart.py").kind == FILE
    a = parse_at("src/billing/cart.py::Cart.total")
    assert (a.kind, a.path, a.name) == (DEFINITION, "src/billing/cart.py", "Cart.total")
    t = parse_at('src/billing/config.py: ROUNDING_MODE =  "half-even"')
    assert (t.kind, t.text) == (TEXT, 'ROUNDING_MODE = "half-even"')


@pytest.mark.parametrize(
    ("at", "says"),
    [
        ("../etc/passwd", "relative to the repository"),
        ("/etc/passwd", "relative to the repository"),
        ("src/x.py::not a name", "is not a name"),
        ("src/./x.py", "relative to the repository"),
        ("", "needs a path"),
    ],
)
def test_an_unusable_anchor_says_why(at: str, says: str) -> None:
    with pytest.raises(AnchorError, match=says):
        parse_at(at)


def test_items_and_their_problems() -> None:
    items, problems = parse_items(
        [
            {"at": "src/x.py::helper", "digest": "sha256:0123456789abcdef", "commit": "abc1234"},
            {"at": "src/x.py", "digest": "md5:12"},
            "src/y.py",
            {"at": "src/z.py", "extra": 1},
        ]
    )
    assert [i.at for i in items] == ["src/x.py::helper"]
    assert problems == [
        "anchors[2]: digest 'md5:12' is not sha256:HEX",
        "anchors[3]: not a mapping with at: PATH[::NAME]",
        "anchors[4]: unknown key 'extra' (at, digest, commit only)",
    ]


def test_a_condition_written_as_an_anchor_check() -> None:
    state, anchor = parse_condition("gone: src/x.py::helper") or ("", None)
    assert state == "gone" and anchor is not None and anchor.name == "helper"
    assert parse_condition("the helper no longer exists") is None


def test_lint_names_a_bad_item(tmp_path: Path) -> None:
    memory = tmp_path / "projects" / "p" / "memory"
    memory.mkdir(parents=True)
    (tmp_path / "_index.md").write_text("# Index\n\n- [[projects/p/memory/a]]\n", encoding="utf-8")
    (memory / "a.md").write_text(
        "---\nname: a\ndescription: d\ntype: memory\nstatus: active\nlabel: fact\n"
        'anchors:\n  - {at: "../outside.py"}\n---\n\nBody.\n',
        encoding="utf-8",
    )
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "vault-spec.md").write_text("# Spec\n", encoding="utf-8")
    result = lint_vault(tmp_path, cwd=tmp_path)
    found = [f for f in result.findings if f.code.startswith("VK2") and "memory" in f.path]
    assert [(f.code, f.line) for f in found] == [("VK206", 7)]
    assert "relative to the repository" in found[0].message
