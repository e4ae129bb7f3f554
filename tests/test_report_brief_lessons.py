"""state/brief-lessons.json: the project lessons only YAML reads, as the last scan read
them. The brief serves the same lines with it as without it; a lesson changed since the
scan (superseded, archived) is read again; a missing, corrupt or foreign file means the
brief reads such lessons with YAML, never a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.scan import cache as scan_cache

MEMORY = f"{config.PROJECTS_DIR}/p/{config.MEMORY_SUBDIR}"


def lesson(name: str, description: str, extra: str = "") -> str:
    # a double-quoted value with an escape: quickmeta leaves it to YAML
    return (
        f'---\nname: {name}\ndescription: "{description}\\u00e9"\ntype: feedback\n'
        f"status: active\n{extra}---\n\nBody of {name}.\n"
    )


@pytest.fixture
def vault(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> Path:
    # files just written are kept (else a scan started within RACY_NS of the writes
    # saves nothing, and the test would depend on the clock): the bound is the scan
    # cache's (its stats are what the lessons are saved under)
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)
    return make_vault(
        {
            f"{MEMORY}/yaml-one.md": lesson("yaml-one", "Pins the clock"),
            f"{MEMORY}/yaml-two.md": lesson("yaml-two", "Retries once"),
            f"{MEMORY}/plain.md": (
                "---\nname: plain\ndescription: Plain keys.\ntype: feedback\n---\n\nBody.\n"
            ),
        }
    )


def facts(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.BRIEF_LESSONS_FILE


def scan(vault: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code in (0, 1), result.output


def brief(vault: Path, tmp_path: Path) -> str:
    cwd = tmp_path / "src" / "p"
    cwd.mkdir(parents=True, exist_ok=True)
    args = ["--vault", str(vault), "report", "--brief", "--cwd", str(cwd)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return re.sub(r"\([^)]* ago\)", "(AGO)", result.stdout)


def lessons_part(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ") and MEMORY in line]


def live(vault: Path, tmp_path: Path) -> str:
    saved = facts(vault).read_bytes()
    facts(vault).unlink()
    try:
        return brief(vault, tmp_path)
    finally:
        facts(vault).write_bytes(saved)


def test_a_scan_saves_the_lessons_only_yaml_reads(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    data = json.loads(facts(vault).read_text())
    assert sorted(data["yaml"]) == [f"{MEMORY}/yaml-one.md", f"{MEMORY}/yaml-two.md"]
    assert data["yaml"][f"{MEMORY}/yaml-one.md"][1] == [
        "yaml-one",
        "Pins the clock\u00e9",
        "active",
    ]
    assert f"{MEMORY}/plain.md" in data["quick"]
    text = brief(vault, tmp_path)
    assert text == live(vault, tmp_path)
    assert [line.split(":")[0] for line in lessons_part(text)] == [
        "- plain",
        "- yaml-one",
        "- yaml-two",
    ]


def test_the_brief_uses_the_saved_facts_without_importing_yaml(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    (tmp_path / "src" / "p").mkdir(parents=True)
    code = (
        "import sys\nfrom vaultkeeper.entry import main\n"
        f"sys.argv = ['vaultkeeper', '--vault', {str(vault)!r}, 'report', '--brief', "
        f"'--cwd', {str(tmp_path / 'src' / 'p')!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('YAML' if 'yaml' in sys.modules else 'NO-YAML', file=sys.stderr)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert got.stderr.splitlines()[-1] == "NO-YAML", got.stderr
    assert "yaml-one: Pins the clock\u00e9" in got.stdout


@pytest.mark.parametrize("change", ['superseded_by: "[[x]]"\n', "archived"])
def test_a_lesson_superseded_or_archived_since_the_scan_is_not_served(
    vault: Path, tmp_path: Path, change: str
) -> None:
    scan(vault)
    path = vault / MEMORY / "yaml-one.md"
    if change == "archived":
        text = path.read_text().replace("status: active", 'status: "archived"')
    else:
        text = lesson("yaml-one", "Pins the clock", change)
    path.write_text(text)
    lines = lessons_part(brief(vault, tmp_path))
    assert [line.split(":")[0] for line in lines] == ["- plain", "- yaml-two"]


def test_a_lesson_edited_since_the_scan_is_read_again(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    (vault / MEMORY / "yaml-two.md").write_text(lesson("yaml-two", "Retries twice"))
    assert "- yaml-two: Retries twice\u00e9" in brief(vault, tmp_path)


@pytest.mark.parametrize(
    "saved",
    [
        None,  # missing
        b"{not json",
        b'{"format": 99, "yaml": {}, "quick": {}}',
        b'{"format": 1, "yaml": [], "quick": {}}',
        b'{"format": 1, "yaml": {"X": 3}, "quick": {}}',
        b"[]",
    ],
)
def test_a_missing_corrupt_or_foreign_file_means_yaml(
    vault: Path, tmp_path: Path, saved: bytes | None
) -> None:
    scan(vault)
    expected = brief(vault, tmp_path)
    if saved is None:
        facts(vault).unlink()
    else:
        facts(vault).write_bytes(saved)
    assert brief(vault, tmp_path) == expected


def test_a_saved_fact_of_the_wrong_shape_is_not_served(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    expected = brief(vault, tmp_path)
    data = json.loads(facts(vault).read_text())
    rel = f"{MEMORY}/yaml-one.md"
    data["yaml"][rel][1] = [3, None]  # a name that is no text, a field missing
    facts(vault).write_text(json.dumps(data))
    assert brief(vault, tmp_path) == expected
    data["yaml"][rel][0] = [0, 0, 0, 0, 0]  # another file's stat
    data["yaml"][rel][1] = ["forged", "forged", "active"]
    facts(vault).write_text(json.dumps(data))
    assert brief(vault, tmp_path) == expected


def test_a_file_changed_within_the_racy_window_is_not_saved(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_cache, "RACY_NS", 3600 * 10**9)  # all "just written"
    scan(vault)
    data = json.loads(facts(vault).read_text())
    assert data["yaml"] == {} and data["quick"] == {}
    assert os.path.exists(vault / MEMORY / "yaml-one.md")
