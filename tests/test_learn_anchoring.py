"""ingest's suggested anchors: the files the session that wrote a lesson read and edited,
from recorded Claude Code 2.1.332 and Codex 0.169.0 transcripts; the report lists them with
the command that accepts them, and a session ties its project to its repository."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import host_fixtures
import pytest
from click.testing import CliRunner
from host_fixtures import claude_files, rollouts

from tests import anchors_fixture as fx
from tests.git_helper import isolate_git
from vaultkeeper.cli import cli

ENTRY = "projects/shop/memory/rounding.md"


def run(vault: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    return result


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository "shop" (the anchors' fixture history) and an empty vault beside it."""
    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "shop"
    fx.build_repo(top)
    (tmp_path / "elsewhere.py").write_text("x = 1\n")
    (top / "src" / "leak.py").symlink_to(tmp_path / "elsewhere.py")
    vault = tmp_path / "vault"
    assert run(vault.parent, "init", str(vault)).exit_code == 0
    monkeypatch.chdir(top)  # `new` runs inside the repository, as the agent's shell does
    return top, vault


def claude_transcript(path: Path, top: Path, vault: Path, calls: list[tuple[str, dict]]) -> Path:
    """The recorded Claude Code session, moved to ``top``, with ``calls`` appended as its
    own assistant lines (a recorded tool_use line with the block swapped)."""
    (src,) = claude_files(host_fixtures.CLAUDE / "mcp").values()
    lines = src.read_text().replace("/HOME/proj", str(top)).replace("/HOME/vault", str(vault))
    rows = [json.loads(x) for x in lines.splitlines()]
    model = next(r for r in rows if r.get("type") == "assistant" and "tool_use" in json.dumps(r))
    for n, (name, args) in enumerate(calls):
        row = json.loads(json.dumps(model))
        row["uuid"] = f"00000000-0000-4000-8000-{n:012d}"
        row["message"]["content"] = [{"type": "tool_use", "id": f"toolu_t{n}", "name": name,
                                      "input": args}]  # fmt: skip
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_claude_code_session_that_wrote_a_lesson_suggests_what_it_read_and_edited(
    shop: tuple[Path, Path], tmp_path: Path
) -> None:
    top, vault = shop
    made = run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "carts round half-even")
    assert made.exit_code == 0, made.output
    calls = [
        ("Read", {"file_path": str(top / "src/cart.py")}),
        ("Edit", {"file_path": str(top / "src/config.py"), "old_string": "a", "new_string": "b"}),
        ("Read", {"file_path": str(tmp_path / "elsewhere.py")}),  # outside the repository
        ("Read", {"file_path": str(top / "src/leak.py")}),  # a symlink leading out of it
        ("Read", {"file_path": str(top / ".git/config")}),
        ("Read", {"file_path": str(top / "src/nope.py")}),  # never there
        ("Read", {"file_path": str(vault / "_index.md")}),
        ("Bash", {"command": "vaultkeeper new memory rounding -p shop -d 'carts round'"}),
        ("Write", {"file_path": "web/app.js", "content": "x"}),  # relative to the cwd
    ]
    transcript = claude_transcript(tmp_path / "session.jsonl", top, vault, calls)
    out = run(vault, "ingest", str(transcript))
    assert out.exit_code == 0, out.output
    accept = (
        f"vaultkeeper apply anchor {ENTRY} --add src/config.py --add web/app.js --add src/cart.py"
    )
    assert (
        f"suggested anchors for rounding ({ENTRY}): src/config.py, web/app.js, src/cart.py; "
        f"accept: {accept}"
    ) in out.output.splitlines()
    kept = json.loads((vault / "state/machine.json").read_text())["anchor_suggestions"]
    assert kept[ENTRY]["paths"] == ["src/config.py", "web/app.js", "src/cart.py"]

    scan = run(vault, "scan", "--force")
    line = next(x for x in scan.output.splitlines() if x.startswith("suggest "))
    assert line == (
        "suggest   rounding -- anchors from the session that wrote it: src/config.py, "
        f"web/app.js, src/cart.py -- accept: {accept} -- {ENTRY}"
    )
    data = json.loads(run(vault, "report", "--json").output)
    assert data["suggested_anchors"] == [
        {"path": ENTRY, "name": "rounding", "anchors": ["src/config.py", "web/app.js",
         "src/cart.py"], "command": accept},
    ]  # fmt: skip

    words = shlex.split(accept)[1:]
    assert run(vault, *words).exit_code == 0  # the command as the report gives it
    text = (vault / ENTRY).read_text()
    assert '{at: "src/config.py", digest:' in text and '{at: "src/cart.py", digest:' in text
    again = run(vault, "scan", "--force")
    assert not any(x.startswith("suggest ") for x in again.output.splitlines())
    assert json.loads(run(vault, "report", "--json").output)["suggested_anchors"] == []


def test_a_codex_session_suggests_its_patches_and_shell_reads(
    shop: tuple[Path, Path], tmp_path: Path
) -> None:
    """The recorded Codex rollout, moved to the repository, with its lesson written through
    the vault's MCP new_lesson, an apply_patch and an exec_command read appended."""
    top, vault = shop
    assert run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d").exit_code == 0
    (src,) = rollouts(host_fixtures.CODEX / "mcp")
    rows = [json.loads(x) for x in src.read_text().replace("/HOME/proj", str(top)).splitlines()]
    model = next(r for r in rows if r["payload"].get("type") == "function_call")
    patch = "*** Begin Patch\n*** Update File: src/util.py\n@@\n-a\n+b\n*** End Patch\n"

    def call(payload: dict[str, Any]) -> dict[str, Any]:
        row = json.loads(json.dumps(model))
        row["payload"] = {**payload, "call_id": "call_t"}
        return row

    rows += [
        call({"type": "function_call", "name": "exec_command",
              "arguments": json.dumps({"cmd": "sed -n 1,40p src/fmt.py", "workdir": str(top)})}),
        call({"type": "custom_tool_call", "name": "apply_patch", "input": patch}),
        call({"type": "function_call", "name": "exec_command",
              "arguments": json.dumps({"cmd": f"cat {tmp_path}/elsewhere.py"})}),
        call({"type": "function_call", "name": "new_lesson", "namespace": "mcp__vaultkeeper",
              "arguments": json.dumps({"name": "rounding", "project": "shop",
                                       "description": "d"})}),
    ]  # fmt: skip
    transcript = tmp_path / "rollout.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = run(vault, "ingest", "--json", str(transcript))
    assert out.exit_code == 0, out.output
    (got,) = json.loads(out.output)["suggested_anchors"]
    assert got["anchors"] == ["src/util.py", "src/fmt.py"]
    assert got["command"].endswith("--add src/util.py --add src/fmt.py")


def test_a_dry_run_suggests_nothing_and_writes_nothing(
    shop: tuple[Path, Path], tmp_path: Path
) -> None:
    top, vault = shop
    assert run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d").exit_code == 0
    calls = [("Read", {"file_path": str(top / "src/cart.py")}),
             ("mcp__vaultkeeper__new_lesson", {"name": "rounding", "project": "shop"})]  # fmt: skip
    transcript = claude_transcript(tmp_path / "s.jsonl", top, vault, calls)
    out = run(vault, "ingest", "--dry-run", str(transcript))
    assert out.exit_code == 0 and "suggested" not in out.output
    machine = vault / "state/machine.json"
    assert not machine.exists() or "anchor_suggestions" not in json.loads(machine.read_text())
    assert "suggested anchors for rounding" in run(vault, "ingest", str(transcript)).output


def test_a_lesson_of_another_repository_or_vault_gets_no_suggestion(
    shop: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top, vault = shop
    other = tmp_path / "other"
    fx.build_repo(other, first="another repository")  # not a clone of shop's: its own root
    assert run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d").exit_code == 0
    monkeypatch.chdir(other)
    assert run(vault, "new", "memory", "theirs", "-p", "other", "-d", "d").exit_code == 0
    calls = [
        ("Read", {"file_path": str(top / "src/cart.py")}),
        ("Bash", {"command": "vaultkeeper new memory theirs -p other -d d"}),  # tied to other
        ("Bash", {"command": f"vaultkeeper --vault {tmp_path}/v2 new memory rounding -p shop"}),
    ]
    transcript = claude_transcript(tmp_path / "s.jsonl", top, vault, calls)
    out = run(vault, "ingest", str(transcript))
    assert out.exit_code == 0 and "suggested" not in out.output
