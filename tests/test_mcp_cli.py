"""`vaultkeeper mcp` without the extra, the SDK kept out of every other command, and
`hooks install|uninstall|status --mcp` registering the server with the hosts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.hosts.hooks import find_program

SDK_MODULES = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "starlette", "httpx")


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }


def test_mcp_without_the_sdk_says_how_to_install_it(sample: Path, tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"  # as if the extra were not installed
        f"sys.argv = ['vaultkeeper', 'mcp', '--vault', {str(sample)!r}]\n"
        "from vaultkeeper.cli import main; main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(tmp_path),
        stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "pipx install --force '.[mcp]' in a clone of vaultkeeper" in done.stderr
    assert "in a virtual environment: pip install '.[mcp]'" in done.stderr


def test_mcp_refuses_a_folder_that_is_not_a_vault(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["mcp", "--vault", str(tmp_path)])
    assert result.exit_code == 2 and "not a vault" in result.stderr


def test_scan_hooks_and_other_commands_never_load_the_sdk(sample: Path, tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from vaultkeeper.cli import cli
        for args in (["scan", "--force"], ["report", "--brief"], ["status"], ["lint"],
                     ["hooks", "install", "claude-code"], ["hooks", "status"],
                     ["apply", "skip", "pin-test-clock", "--reason", "r"]):
            try:
                cli.main(["--vault", {str(sample)!r}, *args], standalone_mode=False)
            except SystemExit:
                pass
        from vaultkeeper import entry
        from vaultkeeper.hosts import hooks
        from vaultkeeper.hosts import mcp as mcp_install
        from vaultkeeper.scan import classify as scan
        from vaultkeeper.search import rank as search  # noqa: F401
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in {SDK_MODULES!r})
        print(loaded)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(tmp_path),
        stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    # the commands ran for real: the scan left its rows
    assert (sample / "state" / "vaultkeeper.db").is_file()


def _run(home: Path, *args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args], env=_env(home))
    # a success's stdout (stderr may warn where this test venv lives); an error's message
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


@pytest.mark.skipif(find_program(os.environ) is None, reason="no vaultkeeper program to register")
def test_hooks_install_mcp_registers_and_uninstall_removes_exactly(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    claude = home / ".claude.json"
    original = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n'
    claude.write_text(original)
    code, out = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp")
    assert code == 0, out
    server = json.loads(claude.read_text())["mcpServers"]["vaultkeeper"]
    assert server["args"] == ["--vault", str(sample), "mcp"]
    assert Path(server["command"]).name == "vaultkeeper"
    assert '"other": {"command": "x"}' in claude.read_text()
    assert (home / ".claude" / "settings.json").is_file()  # the hooks too
    code, out = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp")
    assert code == 0 and "mcp server vaultkeeper" in out and "(unchanged)" in out
    assert _serves(server["command"], server["args"], home) == "recall"  # the entry works
    code, out = _run(home, "hooks", "uninstall", "claude-code", "--mcp")
    assert code == 0, out
    assert claude.read_text() == original

    code, out = _run(home, "--vault", sample, "hooks", "install", "codex", "--mcp", "--json")
    assert code == 0, out
    assert json.loads(out)["mcp"]["changed"] is True
    toml = (home / ".codex" / "config.toml").read_text()
    assert toml.startswith("[mcp_servers.vaultkeeper]\n")
    assert f'args = ["--vault", "{sample}", "mcp"]' in toml

    project = tmp_path / "repo"
    project.mkdir()
    monkeypatch.chdir(project)
    code, out = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp",
                     "--project")  # fmt: skip
    assert code == 0, out
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["vaultkeeper"]
    code, out = _run(home, "hooks", "uninstall", "claude-code", "--mcp", "--project")
    assert code == 0, out
    assert sorted(p.name for p in project.iterdir()) == []  # install made it: it goes


def _serves(command: str, args: list[str], home: Path) -> str:
    """Start the registered command as a host would and name its first tool."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def first_tool() -> str:
        params = StdioServerParameters(command=command, args=args, env={"HOME": str(home)})
        with (home / "server.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return str((await session.list_tools()).tools[0].name)

    return anyio.run(first_tool)


@pytest.mark.parametrize(
    "args",
    [
        ["hooks", "install", "claude-code", "--project"],
        ["hooks", "install", "cron", "--mcp"],
        ["hooks", "install", "codex", "--mcp", "--project"],
    ],
)
def test_mcp_options_must_fit_the_target(sample: Path, tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    code, out = _run(home, "--vault", sample, *args)
    assert code == 2 and ("--project" in out or "--mcp" in out)
    assert list(home.iterdir()) == []  # nothing written
