"""Codex hook trust: `hooks status codex` and `hooks install codex` against what Codex wrote.

tests/fixtures/hosts/codex-0.169.0/hook-trust/ holds the hooks.json of the run, the
config.toml before (config.toml) and after the person pressed `t` in Codex's /hooks
(config.trusted.toml, with Codex's own trusted_hash lines). The handlers that call
dump_hook.py have path-independent commands, so their hashes hold here; the CLI test
trusts a hook the way Codex does, with tools/hosts/hook_hash.py (the recorder's
reference implementation, checked 8/8 against that recording), not with our own code.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.host_fixtures import CODEX
from vaultkeeper.cli import cli
from vaultkeeper.hosts import codex_trust

REPO = Path(__file__).resolve().parent.parent
TRUST = CODEX / "hook-trust/config"
RECORDED_HOOKS = "/HOME/.codex/hooks.json"  # the path in Codex's keys (HOME placeholdered)


def _reference() -> Any:
    spec = importlib.util.spec_from_file_location("hook_hash", REPO / "tools/hosts/hook_hash.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _path_independent() -> list[tuple[str, int, int, dict[str, Any], dict[str, Any]]]:
    data = json.loads((TRUST / "hooks.json").read_text())
    return [
        (event, gi, hi, group, handler)
        for event, groups in data["hooks"].items()
        for gi, group in enumerate(groups)
        for hi, handler in enumerate(group["hooks"])
        if "dump_hook.py" in handler["command"]
    ]


@pytest.mark.parametrize("python310", [False, True])
def test_the_hash_is_the_one_codex_wrote(python310: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if python310:  # no tomllib: the tables are read as Codex writes them
        monkeypatch.setattr(codex_trust.tomledit, "load", lambda text, path: None)
    written = codex_trust.trusted_hashes(TRUST / "config.trusted.toml")
    assert len(written) == 8 and codex_trust.trusted_hashes(TRUST / "config.toml") == {}
    handlers = _path_independent()
    assert len(handlers) == 6
    for event, gi, hi, group, handler in handlers:
        key = codex_trust.key(Path(RECORDED_HOOKS), event, gi, hi)
        assert codex_trust.hook_hash(event, group, handler) == written[key], key


def _hooks(runner: CliRunner, vault: Path, *args: str | Path) -> Any:
    result = runner.invoke(cli, ["--vault", str(vault), "hooks", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def _trust_as_codex_does(hooks_json: Path) -> str:
    """What pressing `t` in Codex's /hooks appends to config.toml (a reference hash)."""
    ref = _reference()
    lines = ["", "[hooks.state]", ""]
    data = json.loads(hooks_json.read_text())
    for key, event, group, handler in ref.hook_keys(hooks_json, data):
        lines += [
            f'[hooks.state."{key}"]',
            f'trusted_hash = "{ref.codex_hook_hash(event, group, handler)}"',
            "",
        ]
    return "\n".join(lines)


def test_status_tells_untrusted_from_trusted_and_a_changed_command_asks_again(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault, other = make_vault(), make_vault()
    codex_home = tmp_path / ".codex"
    codex_home.mkdir()
    hooks_json, config_toml = codex_home / "hooks.json", codex_home / "config.toml"
    config_toml.write_text((TRUST / "config.toml").read_text())

    installed = _hooks(runner, vault, "install", "codex", "--hooks", hooks_json)
    assert installed.stdout.rstrip("\n").splitlines()[-1] == f"  {codex_trust.STEP}"
    status = _hooks(runner, vault, "status", "codex", "--hooks", hooks_json).stdout
    lines = [x for x in status.splitlines() if x.startswith("codex ") and "Session" in x]
    assert len(lines) == 2 and all(line.endswith(f"[{codex_trust.NEW}]") for line in lines)

    config_toml.write_text(config_toml.read_text() + _trust_as_codex_does(hooks_json))
    trusted = config_toml.read_bytes()
    status = _hooks(runner, vault, "status", "codex", "--hooks", hooks_json).stdout
    lines = [x for x in status.splitlines() if x.startswith("codex ") and "Session" in x]
    assert len(lines) == 2 and all(line.endswith(f"[{codex_trust.TRUSTED}]") for line in lines)
    again = _hooks(runner, vault, "install", "codex", "--hooks", hooks_json).stdout
    assert "you have trusted these hooks" in again and codex_trust.STEP not in again

    moved = _hooks(runner, other, "install", "codex", "--hooks", hooks_json).stdout
    assert "updated SessionEnd" in moved and "Codex will ask again" in moved
    assert moved.rstrip("\n").splitlines()[-1] == f"  {codex_trust.STEP}"
    status = _hooks(runner, other, "status", "codex", "--hooks", hooks_json, "--json").stdout
    states = [h["trust"] for h in json.loads(status)["hosts"][0]["handlers"]]
    assert states == [codex_trust.CHANGED, codex_trust.CHANGED]
    assert config_toml.read_bytes() == trusted  # the trust is the person's: never written
    assert not re.search(r"trusted_hash", hooks_json.read_text())
