"""A scan that builds state/vaultkeeper.db from many files says so once on stderr
(scan/cache.py RebuildNote): decided by the number of memory files, not by time; never on the
throttled no-op path nor when the scan finds its rows; a count in place on a terminal."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.scan import cache as rebuild
from vaultkeeper.scan.cache import ScanCache
from vaultkeeper.scan.memory import held_out_candidates

NOTE = "vaultkeeper: building state/vaultkeeper.db from {} files ..."
LESSON = "---\nname: {0}\nstatus: active\ndescription: lesson {0}\n---\nbody\n"


def _vault(make_vault: MakeVault, n: int) -> Path:
    files = {f"projects/api/memory/lesson-{i}.md": LESSON.format(f"lesson-{i}") for i in range(n)}
    return make_vault(files)


def _scan(vault: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", *args])
    return result.exit_code, result.stderr


def _drop_db(vault: Path) -> None:
    for path in (vault / config.STATE_DIR).glob(config.DB_FILE + "*"):
        path.unlink()


def test_a_long_rebuild_says_so_once_and_only_then(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rebuild, "NOTE_FILES", 5)
    vault = _vault(make_vault, 6)
    code, err = _scan(vault, "--force")
    assert code == 0
    assert err.count(NOTE.format(6)) == 1, err
    assert err.count("vaultkeeper: building") == 1  # one line, not a count (no terminal)
    code, err = _scan(vault, "--force")  # its rows found: nothing to say
    assert code == 0 and "building" not in err
    _drop_db(vault)
    code, err = _scan(vault)  # throttled: the no-op path says nothing, builds nothing
    assert code == 0 and "building" not in err
    assert not (vault / config.STATE_DIR / config.DB_FILE).exists()
    code, err = _scan(vault, "--force")  # deleted: built again, said again
    assert code == 0 and err.count(NOTE.format(6)) == 1
    code, err = _scan(vault, "--force", "--fresh")  # every row anew
    assert code == 0 and err.count(NOTE.format(6)) == 1


def test_a_small_vault_builds_without_a_word(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rebuild, "NOTE_FILES", 5)
    vault = _vault(make_vault, 4)
    code, err = _scan(vault, "--force")
    assert code == 0 and "building" not in err
    assert (vault / config.STATE_DIR / config.DB_FILE).exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_count_moves_in_place(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rebuild, "NOTE_FILES", 5)
    monkeypatch.setattr(rebuild, "STEP", 2)
    vault = _vault(make_vault, 5)
    cache, terminal = ScanCache(), _Terminal()
    cache.note = rebuild.RebuildNote(terminal)
    held_out_candidates(vault, dt.date(2026, 6, 1), [], facts=[], cache=cache)
    head = NOTE.format(5)
    assert terminal.getvalue() == f"{head}\r{head} 2/5\r{head} 4/5\r{head} 5/5\n"
