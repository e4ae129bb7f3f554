"""`vaultkeeper use` in the forms an agent's shell runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests import transcript_fixtures as tf
from vaultkeeper.cli import cli
from vaultkeeper.learn.shellwords import said

TODAY = {"VAULTKEEPER_TODAY": "2026-11-30"}
FORMS = [
    "VAULTKEEPER_QUIET=1 vaultkeeper use pin-test-clock",
    "env -i PATH=/usr/bin vaultkeeper use pin-test-clock",
    "bash -c 'cd /tmp && vaultkeeper use pin-test-clock'",
    "echo start\nvaultkeeper use pin-test-clock\necho done",
    "(cd /tmp; vaultkeeper use pin-test-clock)",
    "python -m vaultkeeper use pin-test-clock",
    "time vaultkeeper use pin-test-clock 2>&1 | tail -1",
    "{ nohup vaultkeeper use pin-test-clock > /dev/null; }",
]


def vk(vault: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], env=TODAY)


def count(vault: Path) -> int:
    text = (vault / "patterns/registry.md").read_text()
    block = text[text.index("### pin-test-clock") :]
    return int(block.split("**success count:**", 1)[1].split()[0])


def session(tmp_path: Path, command: str, name: str = "ran-use") -> Path:
    return tf.write(
        tmp_path / f"{name}.jsonl",
        [
            tf.claude(
                "assistant",
                [
                    tf.tool("Bash", command=command),
                    tf.text("Reused [[patterns/registry#pin-test-clock]]."),
                ],
                session=name,
                ts="2026-11-30T10:00:00.000Z",
            )
        ],
    )


@pytest.mark.parametrize("command", FORMS)
def test_a_wrapped_use_and_the_citation_are_one_use(
    tmp_path: Path, sample: Path, command: str
) -> None:
    before = count(sample)
    assert vk(sample, "use", "pin-test-clock").exit_code == 0  # what the command did
    result = vk(sample, "ingest", str(session(tmp_path, command)))
    assert result.exit_code == 0, result.output
    assert "used pin-test-clock with `vaultkeeper use`: counted then, not again" in result.stdout
    assert count(sample) == before + 1


@pytest.mark.parametrize(
    "command",
    ["vaultkeeper use pin-test-clock --help", "vaultkeeper --vault /elsewhere use pin-test-clock"],
)
def test_a_use_that_counted_nothing_here_does_not_cover_the_citation(
    tmp_path: Path, sample: Path, command: str
) -> None:
    """A person's own use, then a session whose `use` counted nothing here and that cited
    the pattern: two uses."""
    before = count(sample)
    assert vk(sample, "use", "pin-test-clock").exit_code == 0
    result = vk(sample, "ingest", str(session(tmp_path, command)))
    assert result.exit_code == 0, result.output
    assert count(sample) == before + 2


def test_shell_uses_reads_the_vault_a_command_names() -> None:
    assert said("VAULTKEEPER_VAULT=/o vaultkeeper use a").uses == [("a", "/o")]
    assert said("vaultkeeper --vault=/x use a; vaultkeeper use b -h").uses == [("a", "/x")]
    assert said(["bash", "-lc", "python3 -m vaultkeeper use 'a b'"]).uses == [("a b", None)]
    assert said("bash script.sh use a").uses == []
    assert said("vaultkeeper use 'unclosed").uses == []
    assert said("cat a.md 2> /e/x.md; (head -3 /v/b.md)").reads == ["a.md", "/v/b.md"]
