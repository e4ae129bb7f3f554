"""VK207: an entry's optional ``paths:`` is one relative glob or a list of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultkeeper.lint.run import lint_vault

HEAD = "---\nname: n\ndescription: d\ntype: memory\nlabel: fact\nstatus: active\n"


def findings(vault: Path, code: str) -> list[str]:
    return [str(f) for f in lint_vault(vault, select=[code]).findings]


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ('["src/**/*.py", "lib/*.ts"]', None),
        ("src/**/*.py", None),
        ("[]", "is not a glob or a list of globs"),
        ("{a: 1}", "is not a glob or a list of globs"),
        ('["/etc/*.conf"]', "holds '/etc/*.conf'"),
        ('["../up/*.py"]', "holds '../up/*.py'"),
        ('["ok/*.py", 3]', "holds 3"),
    ],
)
def test_paths_must_be_relative_globs(make_vault: MakeVault, value: str, bad: str | None) -> None:
    rel = "projects/api/memory/x.md"
    vault = make_vault({rel: HEAD + f"paths: {value}\n---\n\nbody\n"})
    got = findings(vault, "VK207")
    if bad is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith(f"{rel}:7:1: VK207 paths {bad}")
    assert findings(vault, "VK204") == []  # a key the schema knows
