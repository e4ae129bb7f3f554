"""The foundation's command line: help with examples, version, `python -m vaultkeeper`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import __version__, config
from vaultkeeper.cli import cli

FOUNDATION = ["init", "new", "use"]


@pytest.mark.parametrize("command", FOUNDATION)
def test_help_shows_an_example(command: str) -> None:
    for flag in ("--help", "-h"):
        result = CliRunner().invoke(cli, [command, flag], prog_name="vaultkeeper")
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert lines[0].startswith(f"Usage: vaultkeeper {command} ")
        at = lines.index("  Example:")
        assert lines[at + 1].startswith(f"    vaultkeeper {command} ")


def test_group_help_lists_the_foundation_and_exit_codes() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for command in FOUNDATION:
        assert f"  {command} " in result.stdout
    assert "--vault" in result.stdout
    assert "3 waiting for a person" in result.stdout
    assert "  Example:" in result.stdout


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"vaultkeeper, version {__version__}\n"


def test_python_dash_m_works() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Usage: vaultkeeper [OPTIONS] COMMAND [ARGS]...")
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.stdout.strip() == f"vaultkeeper, version {__version__}"


def test_usage_errors_exit_2_without_traceback() -> None:
    runner = CliRunner()
    for args in (["new", "poem", "x", "-d", "y"], ["new", "memory", "x"], ["use"], ["nope"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith("vaultkeeper: error: ")
        assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["apply", "promote", "x"],
            "apply promote: missing option --evidence (see vaultkeeper apply promote --help)",
        ),
        (["use"], "use: missing argument NAME (see vaultkeeper use --help)"),
        (["nope"], "no such command 'nope' (see vaultkeeper --help)"),
        (["--bogus", "scan"], "no such option --bogus (see vaultkeeper --help)"),
        (
            ["scan", "--bogus"],
            "scan: no such option --bogus (see vaultkeeper scan --help)",
        ),
    ],
)
def test_usage_errors_are_one_line_naming_the_command(args: list[str], line: str) -> None:
    result = CliRunner().invoke(cli, args, prog_name="vaultkeeper")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"vaultkeeper: error: {line}\n"


def test_usage_errors_are_one_line_from_the_console_script_too(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "apply", "promote", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        "vaultkeeper: error: apply promote: missing option --evidence "
        "(see vaultkeeper apply promote --help)\n"
    )


def test_with_json_every_error_is_also_one_json_object_on_stdout(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    vault = make_vault()
    cases = [
        (["--vault", str(vault), "use", "no-such-pattern", "--json"], 1),  # a core refusal
        (["--vault", str(vault), "apply", "promote", "x", "--json"], 2),  # a usage error
        (["--vault", str(tmp_path / "none"), "report", "--json"], 2),  # no vault (click)
    ]
    monkeypatch.chdir(tmp_path)
    cases.append((["report", "--json"], 2))  # no vault found upwards (ours)
    for args, code in cases:
        result = runner.invoke(cli, args)
        assert result.exit_code == code, (args, result.output)
        data = json.loads(result.stdout)
        message = result.stderr.removeprefix("vaultkeeper: error: ").rstrip("\n")
        assert data == {"error": message, "exit": code}, args
    plain = runner.invoke(cli, ["--vault", str(vault), "use", "no-such-pattern"])
    assert plain.exit_code == 1 and plain.stdout == ""  # without --json: stderr only


def test_scan_json_errors_are_json_on_both_paths(tmp_path: Path) -> None:
    not_a_vault = tmp_path / "empty"
    not_a_vault.mkdir()
    for code in (
        "import sys; sys.argv[0] = 'vaultkeeper'; from vaultkeeper.entry import main; main()",
        "import sys; sys.argv[0] = 'vaultkeeper'; from vaultkeeper.cli import main; main()",
    ):
        run = subprocess.run(
            [sys.executable, "-c", code, "--vault", str(not_a_vault), "scan", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert run.returncode == 2, run.stderr
        data = json.loads(run.stdout)
        assert data["exit"] == 2 and "not a vault" in data["error"]
        assert run.stderr == f"vaultkeeper: error: {data['error']}\n"


# -- hostile input (adversarial review) --------------------------------------------------


def test_an_empty_vault_or_init_path_is_refused_not_read_as_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `vaultkeeper --vault "$UNSET" new ...` once wrote into the current folder
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in (
        ["init", ""],
        ["--vault", "", "init"],
        ["--vault", "", "new", "memory", "m", "-p", "p", "-d", "x"],
        ["--vault=", "scan"],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert "must not be empty" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_log_renders_a_hand_edited_journal_without_a_traceback(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault()
    records = [
        {"ts": "t1", "outcome": None, "action": "prune", "target": "x", "reason": "r"},
        {"ts": "t2", "outcome": ["a"], "action": {"k": 1}, "target": "y"},
    ]
    journal = vault / config.STATE_DIR / config.JOURNAL_FILE
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = runner.invoke(cli, ["--vault", str(vault), "log"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "t1  None    prune      x: r",
        "t2  ['a']   {'k': 1}   y: ",
    ]


def test_a_throttled_scan_with_json_still_prints_json(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault()
    assert runner.invoke(cli, ["--vault", str(vault), "scan"]).exit_code == 0
    result = runner.invoke(cli, ["--vault", str(vault), "scan", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["skipped"] == "cooldown" and "cooldown left" in data["detail"]
    plain = runner.invoke(cli, ["--vault", str(vault), "scan"])
    assert (plain.exit_code, plain.stdout) == (0, "")  # hooks and cron still see nothing


def test_an_unexpected_exception_is_one_line_not_a_traceback(
    make_vault: MakeVault, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. a 5000-digit success count made int() raise ValueError in the registry reader
    def broken(*_: object, **__: object) -> None:
        raise ValueError("Exceeds the limit (4300 digits)\nfor integer string conversion")

    monkeypatch.setattr("vaultkeeper.learn.count.record_cli", broken)
    result = runner.invoke(cli, ["--vault", str(make_vault()), "use", "x"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr.splitlines() == [
        "vaultkeeper: error: internal error (ValueError at test_cli.py:"
        f"{broken.__code__.co_firstlineno + 1}: Exceeds the limit (4300 digits) for integer "
        "string conversion); a bug in vaultkeeper, please report it"
    ]
    # click's own exits still work: usage errors 2, ctx.exit codes as given
    assert runner.invoke(cli, ["use"]).exit_code == 2


def test_a_copied_vaults_report_names_the_copy_not_the_original(
    sample: Path, runner: CliRunner, tmp_path: Path
) -> None:
    import shutil

    original = sample
    assert runner.invoke(cli, ["--vault", str(original), "scan"]).exit_code == 0
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)  # a backup, a sync to another machine, a move
    brief = runner.invoke(cli, ["--vault", str(copy), "report", "--brief"])
    assert brief.exit_code == 0
    assert f"--vault {copy.resolve()} " in brief.stdout  # the agent acts on this vault
    assert str(original) not in brief.stdout
    assert brief.stderr == ""
    data = json.loads(runner.invoke(cli, ["--vault", str(copy), "report", "--json"]).stdout)
    assert data["vault"] == str(copy.resolve())
    same = runner.invoke(cli, ["--vault", str(original), "report", "--brief"])
    assert same.stderr == "" and f"--vault {original.resolve()} " in same.stdout
