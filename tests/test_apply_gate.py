"""The gates' checks: receipts, stale hashes, lifecycle moves, hold-out dates, safe targets."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultkeeper.apply import gate
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.gate import (
    check_hash,
    check_holdout_passed,
    check_move,
    check_receipt,
    entry_path,
    looks_like_path,
    slug,
)
from vaultkeeper.errors import (
    GateRefused,
    NotFoundError,
    UnsafePathError,
    UsageError,
    VaultkeeperError,
)

NOTES = "line one\nline two\nline three"  # three lines, the last without a newline


@pytest.fixture
def vault(make_vault) -> Path:
    return make_vault(
        {"projects/p/research/notes.md": NOTES, "projects/p/memory/m.md": "---\n---\n"}
    )


@pytest.mark.parametrize(
    "receipt",
    [
        "https://ci.example.com/run/41",
        "http://example.org",
        "projects/p/research/notes.md:1",
        "projects/p/research/notes.md:3",
        "  projects/p/research/notes.md:2  ",
    ],
)
def test_receipt_accepted(vault: Path, receipt: str) -> None:
    assert check_receipt(vault, receipt) == receipt.strip()


def test_receipt_may_be_an_absolute_path_outside_the_vault(vault: Path, tmp_path: Path) -> None:
    source = tmp_path / "repo" / "app.py"
    source.parent.mkdir()
    source.write_text("a\nb\n")
    # taken as written, like a URL: the answer tells nothing of a file outside the
    # vault, not whether it exists nor how many lines it has (issue 32 item 3)
    for receipt in (f"{source}:2", f"{source}:3", f"{tmp_path}/no-such-file:1", "/etc:1"):
        assert check_receipt(vault, receipt) == receipt
    source.chmod(0)  # not even opened
    assert check_receipt(vault, f"{source}:1") == f"{source}:1"
    with pytest.raises(GateRefused, match="no line 0"):  # the receipt's own text
        check_receipt(vault, f"{source}:0")


def test_an_absolute_receipt_naming_the_vault_is_checked_as_a_vault_file(vault: Path) -> None:
    notes = vault / "projects/p/research/notes.md"
    assert check_receipt(vault, f"{notes}:1") == f"{notes}:1"
    with pytest.raises(GateRefused, match="no line 99"):
        check_receipt(vault, f"{notes}:99")
    # a link in the vault that leads out: refused, whatever it points at
    (vault / "out.md").symlink_to(vault.parent / "no-such-file")
    with pytest.raises(VaultkeeperError, match="resolves outside the vault"):
        check_receipt(vault, f"{vault}/out.md:1")
    with pytest.raises(VaultkeeperError, match="resolves outside the vault"):
        check_receipt(vault, "out.md:1")


@pytest.mark.parametrize(
    ("receipt", "why"),
    [
        (None, "no evidence"),
        ("", "no evidence"),
        ("trust me", "not a receipt"),
        ("projects/p/research/notes.md", "not a receipt"),
        ("ftp://example.org/x", "not a receipt"),
        ("https://", "not a receipt"),
        ("projects/p/research/notes.md:0", "has 3 lines, no line 0"),
        ("projects/p/research/notes.md:4", "has 3 lines, no line 4"),
        ("projects/p/research/missing.md:1", "not an existing file"),
        ("projects/p/research:1", "not an existing file"),
    ],
)
def test_receipt_refused(vault: Path, receipt: str | None, why: str) -> None:
    with pytest.raises(GateRefused, match=why):
        check_receipt(vault, receipt)


def test_relative_receipt_cannot_escape_the_vault(vault: Path) -> None:
    (vault.parent / "outside.md").write_text("x\n")
    with pytest.raises(UnsafePathError):
        check_receipt(vault, "../outside.md:1")


def test_hash_matches_in_full_or_by_prefix() -> None:
    digest = "ab" * 32
    check_hash(None, digest, "x")
    check_hash(digest, digest, "x")
    check_hash(digest[:8].upper(), digest, "x")


def test_stale_hash_refused() -> None:
    with pytest.raises(GateRefused, match="changed since the report"):
        check_hash("cd" * 32, "ab" * 32, "### alpha")


@pytest.mark.parametrize("bad", ["abc", "xyz12345", "ab" * 33])
def test_malformed_hash_is_bad_input(bad: str) -> None:
    with pytest.raises(UsageError):
        check_hash(bad, "ab" * 32, "x")


def test_allowed_moves() -> None:
    assert check_move("revalidate", "held_out") is None  # pass or fail decides
    assert check_move("reactivate", "archived") == "active"


@pytest.mark.parametrize(
    ("action", "status", "why"),
    [
        ("revalidate", "active", "status is active: only a held_out entry"),
        ("revalidate", "archived", "status is archived: only a held_out entry"),
        ("revalidate", None, "status is missing"),
        ("reactivate", "held_out", "status is held_out: only an archived entry"),
        ("reactivate", "active", "status is active: only an archived entry"),
        ("reactivate", "bogus", "status is bogus"),
    ],
)
def test_refused_moves(action: str, status: str | None, why: str) -> None:
    with pytest.raises(GateRefused, match=why):
        check_move(action, status)


def test_holdout_passed_on_the_day_itself() -> None:
    day = dt.date(2026, 9, 2)
    assert check_holdout_passed("2026-09-02", day) == day
    assert check_holdout_passed(dt.date(2026, 9, 1), day) == dt.date(2026, 9, 1)
    with pytest.raises(GateRefused, match="hold-out runs until 2026-09-03"):
        check_holdout_passed("2026-09-03", day)


@pytest.mark.parametrize("value", [None, "yesterday", "2026-02-30", 20260901])
def test_holdout_without_a_real_date_is_refused(value: object) -> None:
    with pytest.raises(GateRefused, match="not a quoted ISO date"):
        check_holdout_passed(value, dt.date(2026, 9, 2))


def test_entry_path_resolves_inside(vault: Path) -> None:
    assert (
        entry_path(vault, "projects/p/memory/m.md") == (vault / "projects/p/memory/m.md").resolve()
    )
    # the .md may be left off, as in a wikilink
    assert entry_path(vault, "projects/p/memory/m").name == "m.md"
    assert entry_path(vault, str(vault / "projects/p/memory/m.md")).name == "m.md"


def test_entry_path_refuses_escapes_before_reading(vault: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nstatus: held_out\n---\n")
    (vault / "projects/p/memory/link.md").symlink_to(secret)
    (vault / "projects/p/out").symlink_to(tmp_path)
    for target in (
        "../secret.md",
        str(secret),
        "projects/p/memory/link.md",
        "projects/p/out/secret.md",
    ):
        with pytest.raises(UnsafePathError, match="outside the vault"):
            entry_path(vault, target)


def test_entry_path_refuses_vaultkeepers_own_files(vault: Path) -> None:
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian/app.md").write_text("x")
    for target in ("state/self-maintain.json", "_index.md", ".obsidian/app.md"):
        (vault / target).parent.mkdir(exist_ok=True)
        (vault / target).touch()
        with pytest.raises(GateRefused, match="not an entry"):
            entry_path(vault, target)
    with pytest.raises(NotFoundError):
        entry_path(vault, "projects/p/memory/nope.md")


def test_looks_like_path() -> None:
    assert looks_like_path("projects/p/memory/m.md")
    assert looks_like_path("m.md")
    assert looks_like_path("..")
    assert looks_like_path("~/x")
    assert not looks_like_path("pin-test-clock")
    assert not looks_like_path("Pin test clock")


def test_slug() -> None:
    assert slug("pin-test-clock") == "pin-test-clock"
    assert slug("Pin Test  Clock!") == "pin-test-clock"
    assert len(slug("x" * 100)) == 64
    with pytest.raises(GateRefused):
        slug("***")


def test_receipt_with_a_line_number_too_long_for_int_is_refused(vault: Path) -> None:
    digits = "9" * 5000  # int() refuses more than 4300 digits: was a ValueError traceback
    with pytest.raises(GateRefused, match=f"has 3 lines, no line {digits}"):
        check_receipt(vault, f"projects/p/research/notes.md:{digits}")


NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)


BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"


HELD_REGISTRY = "# Pattern registry\n\n" + BETA


def test_evidence_is_read_before_the_writer_lock(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = "---\nname: h\ndescription: d\ntype: memory\nstatus: held_out\nlabel: inferred\n"
    held += 'holdout_until: "2026-01-01"\n---\nbody\n'
    vault = make_vault(
        {"patterns/registry.md": HELD_REGISTRY, "projects/p/memory/h.md": held, "ev.md": "a\nb\n"}
    )
    seen: list[int] = []
    real = gate._count_lines

    def slow_evidence(path: Path, *rest: int) -> object:
        # another writer, while the evidence is read: it must not wait for this one
        other = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "use", "beta"],
            capture_output=True,
            timeout=300,
            check=False,
            env={**os.environ, "VAULTKEEPER_TODAY": "2026-12-01"},
        )
        seen.append(other.returncode)
        return real(path, *rest)

    monkeypatch.setattr(gate, "_count_lines", slow_evidence)
    decision = Decision("revalidate", "projects/p/memory/h.md", "ev.md:2", "pass")
    outcome = apply_decision(vault, decision, NOW)
    assert outcome.outcome == "act", outcome.reason
    assert seen == [0]


def test_a_fifo_as_evidence_is_refused_at_once(make_vault: MakeVault) -> None:
    held = "---\nname: h\ndescription: d\ntype: memory\nstatus: held_out\nlabel: inferred\n"
    held += 'holdout_until: "2026-01-01"\n---\nbody\n'
    vault = make_vault({"projects/p/memory/h.md": held})
    os.mkfifo(vault / "pipe.md")
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "apply", "revalidate",
         "projects/p/memory/h.md", "--pass", "--evidence", f"{vault / 'pipe.md'}:1"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    assert "is not an existing file" in run.stderr
