"""`new --falsify TEXT` writes the condition; lint VK205 warns on a held-out entry without one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper.entries.create import new_entry
from vaultkeeper.errors import UsageError
from vaultkeeper.lint.run import lint_vault

TODAY = dt.date(2026, 12, 1)


def findings(vault: Path, code: str = "VK205") -> list[str]:
    return [str(f) for f in lint_vault(vault, select=[code]).findings]


def test_falsify_becomes_the_condition_and_lint_is_quiet(make_vault: Any) -> None:
    vault: Path = make_vault()
    done = new_entry(
        vault, "memory", "retry-once", "Retry a flaky job once", project="api", today=TODAY,
        falsify="a retry \u2014 even one \u2014 hides a real bug",
    )  # fmt: skip
    lines = (vault / done.path).read_text().splitlines()
    assert lines[6] == 'falsification_condition: "a retry -- even one -- hides a real bug"'
    assert lines[7] == 'holdout_until: "2026-12-08"'
    assert findings(vault) == []


def test_without_falsify_lint_warns_on_the_held_out_entry(make_vault: Any) -> None:
    vault: Path = make_vault()
    done = new_entry(vault, "memory", "bare", "A lesson", project="api", today=TODAY)
    assert (vault / done.path).read_text().splitlines()[6] == 'falsification_condition: ""'
    assert findings(vault) == [
        f"{done.path}:7:1: VK205 held-out entry with an empty falsification_condition: "
        "re-validation has nothing to check it against; say what would prove it wrong"
    ]
    result = lint_vault(vault)  # on by default on our vaults, and only a warning
    assert [f.severity for f in result.findings if f.code == "VK205"] == ["warning"]


def test_vk205_only_for_held_out_entries(make_vault: Any) -> None:
    head = "---\nname: n\ndescription: d\ntype: memory\nlabel: inferred\n"
    vault: Path = make_vault(
        {
            "projects/p/memory/active.md": head + "status: active\n---\n",
            "projects/p/memory/nostatus.md": head + 'holdout_until: "2026-01-01"\n---\n',
            "projects/p/memory/missing.md": head + "status: held_out\n---\n",
            "projects/p/memory/set.md": head
            + "status: held_out\nfalsification_condition: it breaks\n---\n",
        }
    )
    assert [f.split(": VK205")[0] for f in findings(vault)] == [
        "projects/p/memory/missing.md:6:1",  # no key: the status line
        "projects/p/memory/nostatus.md:6:1",  # no status, a hold-out date: held out
    ]


@pytest.mark.parametrize(
    ("kind", "falsify", "message"),
    [
        ("memory", "   ", "--falsify must not be empty"),
        (
            "memory",
            "caf\u00e9 closes",
            r"--falsify: non-ASCII character 'é' \(U\+00E9\) at column 4",
        ),
        ("pattern", "x", "--falsify is for an entry with frontmatter"),
    ],
)
def test_bad_falsify_is_refused_and_nothing_is_written(
    make_vault: Any, kind: str, falsify: str, message: str
) -> None:
    vault: Path = make_vault()
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))
    with pytest.raises(UsageError, match=message):
        new_entry(vault, kind, "x", "d", project="api", today=TODAY, falsify=falsify)
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before
