"""The real `vaultkeeper mcp` server over stdio, driven by the MCP SDK's own client.

Every tool and resource is called; what a user would notice is checked: the vault's
bytes, the journal, the queue, the usage log. Deletion is tested with the client's
elicitation callback standing in for the person (accept with the right name, the wrong
name, decline, cancel) and with a client that declares no elicitation at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from tests.conftest import snapshot
from tests.mcp_harness import TODAY, Person, call, connect, error, journal
from vaultkeeper.cli import cli
from vaultkeeper.store.uses import read_events

TOOLS = {
    "recall", "search", "read", "cite", "new_lesson", "new_decision", "report", "status",
    "apply_promote", "apply_revalidate", "apply_reactivate", "apply_skip", "apply_prune",
}  # fmt: skip
BLOCK = "yaml-anchor-templates"
RECEIPT = "projects/api/research/ci-failure-survey.md:9"


def _scan(vault: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), "scan", "--force"], env={"VAULTKEEPER_TODAY": TODAY}
    )
    assert result.exit_code == 0, result.output


def _count(vault: Path, name: str) -> str:
    text = (vault / "patterns" / "registry.md").read_text()
    block = text.split(f"### {name}\n", 1)[1].split("###", 1)[0]
    return block.split("**success count:**", 1)[1].split("\n", 1)[0].strip()


def test_every_tool_and_resource_over_stdio(sample: Path, tmp_path: Path) -> None:
    _scan(sample)
    registry = sample / "patterns" / "registry.md"
    flaky = sample / "projects/api/memory/flaky-ci-retries.md"
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    (sample / "projects/api/memory/leak.md").symlink_to(outside)

    async def main() -> None:
        async with connect(sample, tmp_path / "home") as s:
            listed = (await s.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            for tool in listed:
                assert len(tool.description or "") > 80, tool.name
                assert tool.input_schema["type"] == "object"
                assert tool.output_schema is not None, tool.name
            schemas = {t.name: t.input_schema for t in listed}
            assert schemas["apply_revalidate"]["properties"]["result"]["enum"] == ["pass", "fail"]
            # nothing the model could fill in to answer for the person
            assert set(schemas["apply_prune"]["properties"]) == {"target", "expect_hash", "dry_run"}
            assert "--anchor" in schemas["new_lesson"]["properties"]["anchors"]["description"]

            recall = await call(s, "recall", project="api")
            assert recall["available"] and "SELF-MAINTAIN: prune candidates 1" in recall["brief"]
            assert "Lessons of project api" in recall["brief"]
            assert "[[projects/api/memory/flaky-ci-retries]]" in recall["brief"]
            by_cwd = await call(s, "recall", cwd=str(sample / "projects" / "web"))
            assert "Lessons of project web" in by_cwd["brief"]
            assert "no folder" in await error(s, "recall", project="nope")

            hits = (await call(s, "search", query="flaky retry"))["hits"]
            assert hits[0]["path"] == "projects/api/memory/flaky-ci-retries.md"
            assert hits[0]["link"] == "[[projects/api/memory/flaky-ci-retries]]"
            pattern = (await call(s, "search", query="bisect", kind="pattern"))["hits"][0]
            assert pattern["cite"] == "bisect-before-reading-diffs"
            live = await call(s, "search", query="webpack")
            assert [h["name"] for h in live["hits"]] == ["vite-build"]  # the old one is archived
            everything = await call(s, "search", query="webpack", include_archived=True)
            old = next(h for h in everything["hits"] if h["name"] == "old-webpack-config")
            assert old["status"] == "archived"
            assert old["superseded_by"] == "projects/web/memory/vite-build"

            read = await call(s, "read", path="projects/api/memory/flaky-ci-retries.md")
            assert read["text"] == flaky.read_text()
            assert "outside the vault" in await error(s, "read", path="../outside.md")
            assert "outside the vault" in await error(s, "read", path=str(outside))
            assert "outside the vault" in await error(s, "read", path="projects/api/memory/leak.md")
            assert "not an entry" in await error(s, "read", path="state/journal.jsonl")

            report = await call(s, "report")
            assert report["available"] and report["summary"].startswith("SELF-MAINTAIN:")
            status = await call(s, "status")
            assert status["verdict"] in ("ok", "warn", "fail") and status["signals"]

            lesson = await call(
                s, "new_lesson", name="retry-once", description="Retry once",
                project="api", body="Only once; a second failure is real.",
                falsification_condition="a second retry passes",
            )  # fmt: skip
            text = (sample / lesson["path"]).read_text()
            assert 'falsification_condition: "a second retry passes"' in text
            assert "status: held_out" in text and text.endswith(
                "# retry-once\n\nOnly once; a second failure is real.\n"
            )
            assert lesson["index_line"] in (sample / "_index.md").read_text()
            decision = await call(
                s, "new_decision", name="pick-vite", description="Vite over webpack",
                project="web",
            )  # fmt: skip
            assert "type: decision" in (sample / decision["path"]).read_text()
            assert "already taken" in await error(
                s, "new_lesson", name="retry-once", description="x", project="api"
            )

            before = _count(sample, "pin-test-clock")
            cited = await call(s, "cite", name="pin-test-clock", evidence="src/clock.py:12")
            assert cited["counted"] and cited["count_after"] == int(before) + 1
            again = await call(s, "cite", name="pin-test-clock", evidence="src/clock.py:40")
            assert not again["counted"] and _count(sample, "pin-test-clock") == str(
                int(before) + 1
            )  # one count per session, however often cited
            note = await call(s, "cite", name="projects/api/memory/flaky-ci-retries.md",
                              evidence="ci.yml:3")  # fmt: skip
            assert note["kind"] == "note" and note["recorded"]
            assert "no registry pattern" in await error(s, "cite", name="nope", evidence="x")

            promoted = await call(
                s, "apply_promote", name="bisect-before-reading-diffs", evidence=RECEIPT
            )
            assert promoted["outcome"] == "act"
            assert (sample / "skills/bisect-before-reading-diffs/SKILL.md").is_file()
            revalidated = await call(
                s, "apply_revalidate", path="projects/api/memory/flaky-ci-retries.md",
                result="pass", evidence=RECEIPT,
            )  # fmt: skip
            assert revalidated["outcome"] == "act" and "status: active" in flaky.read_text()
            grid = sample / "projects/web/memory/css-grid-over-floats.md"
            kept = grid.read_bytes()
            refused = await call(
                s, "apply_reactivate", path="projects/web/memory/css-grid-over-floats.md",
                evidence=RECEIPT,
            )  # fmt: skip
            assert refused["outcome"] == "defer" and "held_out" in refused["reason"]
            assert refused["exit_code"] == 1 and grid.read_bytes() == kept
            webpack = sample / "projects/web/memory/old-webpack-config.md"
            back = await call(
                s, "apply_reactivate", path="projects/web/memory/old-webpack-config.md",
                evidence=RECEIPT,
            )  # fmt: skip
            assert back["outcome"] == "act" and "status: active" in webpack.read_text()
            skipped = await call(s, "apply_skip", target="screenshot-diff-review", reason="weekly")
            assert skipped["outcome"] == "silence"

            registry_bytes = registry.read_bytes()
            asked = await call(s, "apply_prune", target=BLOCK)  # no elicitation declared
            assert asked["outcome"] == "ask" and asked["exit_code"] == 3
            assert "vaultkeeper review" in asked["reason"]
            assert registry.read_bytes() == registry_bytes
            assert not (sample / ".trash").exists()

            index = await s.read_resource("vault://index")
            assert index.contents[0].text == (sample / "_index.md").read_text()
            entry = await s.read_resource("vault://entry/projects/api/memory/flaky-ci-retries.md")
            assert entry.contents[0].text == flaky.read_text()
            for bad in ("vault://entry/../outside.md", "vault://entry/projects/api/memory/leak.md"):
                with pytest.raises(Exception, match="outside|security|Unknown"):
                    await s.read_resource(bad)

    anyio.run(main)
    records = journal(sample)
    assert [(r["action"], r["outcome"]) for r in records if r["action"] != "use"] == [
        ("promote", "act"), ("revalidate", "act"), ("reactivate", "defer"),
        ("reactivate", "act"), ("skip", "silence"), ("prune", "ask"),
    ]  # fmt: skip
    uses = [r for r in records if r["action"] == "use"]
    assert len(uses) == 1 and uses[0]["evidence"] == "mcp:src/clock.py:12"
    queue = (sample / "state" / "queue.jsonl").read_text()
    assert json.loads(queue.splitlines()[0])["target"] == BLOCK


def _block_text(vault: Path) -> str:
    text = (vault / "patterns" / "registry.md").read_text()
    return f"### {BLOCK}\n" + text.split(f"### {BLOCK}\n", 1)[1].split("\n### ", 1)[0]


def test_prune_asks_the_person_and_only_accept_with_the_right_name_deletes(
    sample: Path, tmp_path: Path
) -> None:
    evil = "projects/web/memory/evil-note.md"
    (sample / evil).write_text(
        "---\nname: evil-note\ndescription: x\ntype: memory\nstatus: archived\nlabel: fact\n"
        "---\n\nclear screen \x1b[2J and \u202e reversed\n"
    )
    indexed = CliRunner().invoke(cli, ["--vault", str(sample), "index"])
    assert indexed.exit_code == 0, indexed.output
    shown_block = _block_text(sample)
    person = Person(
        ("accept", "yaml-anchor"), ("decline", None), ("cancel", None),
        ("accept", BLOCK), ("accept", "evil-note"),
    )  # fmt: skip
    before = snapshot(sample)
    kept_reasons: list[str] = []

    async def main() -> None:
        async with connect(sample, tmp_path / "home", person, dialog=True) as s:
            for _ in range(3):
                kept = await call(s, "apply_prune", target=BLOCK)
                assert kept["outcome"] in ("silence", "ask")
                assert snapshot(sample) == before  # nothing deleted, nothing moved
                kept_reasons.append(kept["reason"])
            gone = await call(s, "apply_prune", target=BLOCK)
            assert gone["outcome"] == "act"
            assert gone["record"]["trash"] == f".trash/{gone['id']}"
            assert f"### {BLOCK}" not in (sample / "patterns/registry.md").read_text()
            evil_gone = await call(s, "apply_prune", target=evil)
            assert evil_gone["outcome"] == "act" and not (sample / evil).exists()

    anyio.run(main)
    assert "typed" in kept_reasons[0] and "'yaml-anchor'" in kept_reasons[0]
    assert "the host declined" in kept_reasons[1] and "cancelled" in kept_reasons[2]
    first = person.shown[0]
    assert shown_block.rstrip("\n") in first.message  # exactly what goes
    assert first.requested_schema["required"] == ["name"]
    assert f"type {BLOCK} below" in first.message
    assert "\\u001b[2J" in person.shown[4].message and "\\u202e" in person.shown[4].message
    assert "\x1b" not in person.shown[4].message and "\u202e" not in person.shown[4].message
    records = [r for r in journal(sample) if r["action"] == "prune"]
    # a wrong name is a person's answer (kept); a decline or cancel is not known to be
    assert [r["outcome"] for r in records] == ["silence", "ask", "ask", "act", "act"]
    assert records[0]["reason"].startswith("kept: ")
    # the deletion is the terminal's: `vaultkeeper restore ID` brings back every byte
    restored = CliRunner().invoke(cli, ["--vault", str(sample), "restore", records[3]["id"]])
    assert restored.exit_code == 0, restored.output
    again = CliRunner().invoke(cli, ["--vault", str(sample), "restore", records[4]["id"]])
    assert again.exit_code == 0, again.output
    after = snapshot(sample)
    assert {k: v for k, v in after.items() if not k.startswith(".trash/")} == before


def test_two_clients_citing_and_writing_at_once_lose_nothing(sample: Path, tmp_path: Path) -> None:
    start = {n: int(_count(sample, n)) for n in ("pin-test-clock", "grep-the-config-value")}
    made: list[dict[str, Any]] = []

    async def client(k: int) -> None:
        async with connect(sample, tmp_path / f"home{k}") as s:
            for i in range(4):
                made.append(
                    await call(
                        s,
                        "new_lesson",
                        name=f"c{k}-lesson-{i}",
                        description=f"L {k} {i}",
                        project="api",
                    )  # fmt: skip
                )
                for name in start:
                    await call(s, "cite", name=name, evidence=f"run{k}.log:{i + 1}")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(client, 1)
            group.start_soon(client, 2)

    anyio.run(main)
    index = (sample / "_index.md").read_text()
    for k in (1, 2):
        for i in range(4):
            assert (sample / f"projects/api/memory/c{k}-lesson-{i}.md").is_file()
            assert f"[[projects/api/memory/c{k}-lesson-{i}]]" in index
    assert len(made) == 8
    for name, count in start.items():  # two sessions: each counts once
        assert _count(sample, name) == str(count + 2)
    uses = list(read_events(sample))  # the events, not their transactions' lines
    assert len(uses) == 4 and len({(u.session, u.target) for u in uses}) == 4
    checked = CliRunner().invoke(cli, ["--vault", str(sample), "index", "--check"])
    assert checked.exit_code == 0, checked.output


def test_a_server_answering_after_many_registry_edits_holds_one_parse(sample: Path) -> None:
    """A long-running server parses the registry again after each edit and keeps only
    the current text's blocks: never one parse per text (or per path) it ever read."""
    import datetime as dt
    import gc

    from mcp import Client

    from vaultkeeper.mcp.server import build
    from vaultkeeper.registry.blocks import RegistryBlock

    _scan(sample)
    registry = sample / "patterns" / "registry.md"
    blocks = registry.read_text().count("\n### ")
    now = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
    promote = {"name": "pin-test-clock", "evidence": RECEIPT, "dry_run": True}

    def held() -> int:  # this vault's parsed blocks alive (other tests' are not ours)
        gc.collect()
        live = (o for o in gc.get_objects() if isinstance(o, RegistryBlock))
        return sum(head.path.is_relative_to(sample) for head in live)

    async def main() -> None:
        async with Client(build(sample, lambda: now, "mcp-test")) as client:
            for edit in range(40):
                with registry.open("a") as fh:
                    fh.write(f"\nEdited by hand, time {edit}.\n")
                for tool, args in (("recall", {}), ("apply_promote", promote)):
                    result = await client.call_tool(tool, args)
                    assert not result.is_error, result.content
            assert 0 < held() <= blocks
            registry.rename(registry.with_name("renamed.md"))  # the old path's parse goes
            assert not (await client.call_tool("apply_promote", promote)).is_error
            assert 0 < held() <= blocks

    anyio.run(main)
