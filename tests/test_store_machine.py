"""state/machine.json: this machine's records in one file; an older vaultkeeper's four
files are read and moved in, never lost; an unreadable or linked machine.json is refused
in one line and kept as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeVault
from tests.native_tree import API, WEB, build, vk
from vaultkeeper.native.folders import sanitize
from vaultkeeper.store import machine

TODAY = "2026-12-01"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VAULTKEEPER_TODAY", TODAY)
    build(home)
    return home


def folder(home: Path, cwd: str) -> str:
    return str(home / ".claude" / "projects" / sanitize(cwd) / "memory")


def old_files(vault: Path, home: Path) -> dict[str, object]:
    """What vaultkeeper 0.x left in state/: one file per record."""
    state = vault / "state"
    state.mkdir(exist_ok=True)
    written: dict[str, object] = {
        "native.json": {
            "version": 1,
            "folders": [{"project": "src-api", "path": folder(home, API)}],
            "pruned": {"20261130-101010-abcdef": "d" * 16},
        },
        "repositories.json": {"a" * 40: "/src/shop"},
        "ingested.json": {"since": 1.5, "files": {"/t/s.jsonl": 2.5}},
        "anchor-suggestions.json": {
            "version": 1,
            "entries": {"projects/shop/memory/x.md": {"paths": ["a.py"], "date": TODAY}},
        },
    }
    for name, body in written.items():
        (state / name).write_text(json.dumps(body))
    return written


def test_an_older_vaults_records_are_read_then_moved_into_one_file(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    old_files(vault, home)
    code, out, _ = vk(vault, "native", "review", "--json")  # a reader: nothing moved yet
    assert code in (0, 1) and "src-api" in out
    assert (vault / "state" / "native.json").exists()
    code, out, _ = vk(vault, "native", "adopt", "--cwd", WEB)  # the first write moves them
    assert code == 0
    state = sorted(p.name for p in (vault / "state").iterdir())
    assert not {"native.json", "repositories.json", "ingested.json"} & set(state)
    assert "anchor-suggestions.json" not in state and "machine.json" in state
    kept = json.loads((vault / "state" / "machine.json").read_text())
    assert [f["project"] for f in kept["folders"]] == ["src-api", "src-web"]
    assert kept["pruned"] == {"20261130-101010-abcdef": "d" * 16}
    assert kept["repositories"] == {"a" * 40: "/src/shop"}
    assert kept["ingested"] == {"since": 1.5, "files": {"/t/s.jsonl": 2.5}}
    assert kept["anchor_suggestions"]["projects/shop/memory/x.md"]["paths"] == ["a.py"]


DEEP = b'{"folders": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # past json's nesting depth


@pytest.mark.parametrize("body", [b"not json {", b"[1, 2]", b"\xff\xfe", DEEP])
def test_an_unreadable_machine_file_is_refused_and_kept(
    home: Path, make_vault: MakeVault, body: bytes
) -> None:
    vault = make_vault()
    path = vault / "state" / "machine.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(body)
    code, out, err = vk(vault, "native", "adopt", "--cwd", WEB)
    assert code != 0 and out == ""
    assert err.startswith("vaultkeeper: error: state/machine.json: unreadable (")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert path.read_bytes() == body  # never overwritten


def test_a_machine_file_linked_out_of_the_vault_is_neither_read_nor_written(
    home: Path, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"folders": [{"project": "x", "path": folder(home, API)}]}))
    (vault / "state").mkdir(exist_ok=True)
    (vault / "state" / "machine.json").symlink_to(outside)
    before = outside.read_bytes()
    code, _, err = vk(vault, "native", "adopt", "--cwd", WEB)
    assert code != 0 and "state/machine.json: unreadable" in err
    assert outside.read_bytes() == before


def test_a_record_nested_past_jsons_depth_is_unreadable_not_a_crash(
    home: Path, make_vault: MakeVault
) -> None:
    # json.loads raises RecursionError on nesting past its depth: machine.json (or an
    # older vaultkeeper's file) so made crashed scan, report and status with an
    # "internal error ... a bug" instead of being refused (or left) as unreadable.
    vault = make_vault()
    state = vault / "state"
    state.mkdir(exist_ok=True)
    (state / "repositories.json").write_bytes(DEEP)  # an old file: left where it is
    code, _, err = vk(vault, "scan", "--force")
    assert code == 0 and "internal error" not in err
    (state / "machine.json").write_bytes(DEEP)
    code, _, err = vk(vault, "scan", "--force")  # nobody asked for a record: the scan runs
    assert code == 0 and "internal error" not in err
    code, _, err = vk(vault, "status")
    assert "internal error" not in err
    assert (state / "machine.json").read_bytes() == DEEP


def test_two_adopts_at_once_keep_both_folders(
    home: Path, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # adopt read the adopted folders, then wrote its list whatever machine.json held by
    # then: another adopt that wrote in between (another terminal, a second session)
    # lost its folder. The list is now made from what the write finds, under the lock.
    from vaultkeeper.native import folders

    vault = make_vault()
    real = machine.update
    other: list[bool] = []

    def another_adopt_first(*args: Any, **kwargs: Any) -> Any:
        if not other:
            other.append(True)
            folders.adopt(vault, home, [Path(folder(home, API))])  # finishes first
        return real(*args, **kwargs)

    monkeypatch.setattr(machine, "update", another_adopt_first)
    folders.adopt(vault, home, [Path(folder(home, WEB))])
    kept = json.loads((vault / "state" / "machine.json").read_text())
    assert sorted(f["path"] for f in kept["folders"]) == sorted(
        [folder(home, API), folder(home, WEB)]
    )
