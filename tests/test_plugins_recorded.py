"""The real Claude Code and Codex installed the plugins from this repository, offline.

tools/hosts/record_plugins.py ran each host against the mock model server (127.0.0.1)
in throw-away HOMEs: the repository added as a local marketplace and both plugins
installed by the host's own commands (`plugin`), `vaultkeeper hooks install HOST`
instead (`hooks-install`), and the plugin with no vaultkeeper on PATH
(`missing-program`). These tests read what the hosts wrote
(tests/fixtures/hosts/plugins/<host>-<version>/); they never run a host.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper.hosts import codex_trust

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "fixtures" / "hosts" / "plugins"
CLAUDE = next(RECORDED.glob("claude-code-*"))
CODEX = next(RECORDED.glob("codex-*"))
MISSING = "vaultkeeper plugin: the vaultkeeper command is not installed (not on PATH)"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def exits(folder: Path) -> dict[str, int]:
    out = {}
    for line in (folder / "commands.txt").read_text().splitlines():
        if "] exit " in line:
            label, rest = line[1:].split("] exit ", 1)
            out[label] = int(rest.split()[0])
    return out


@pytest.mark.parametrize("host", [CLAUDE, CODEX], ids=lambda p: p.name)
def test_the_plugin_gives_the_brief_hooks_install_gives(host: Path) -> None:
    plugin = (host / "plugin" / "brief.txt").read_text()
    by_hand = (host / "hooks-install" / "brief.txt").read_text()
    assert plugin.startswith("Memory vault: /HOME/vault. Start at its _index.md")
    assert "[[patterns/registry#pin-test-clock]]" in plugin  # the vault's patterns, served
    assert plugin == by_hand


@pytest.mark.parametrize("host", [CLAUDE, CODEX], ids=lambda p: p.name)
def test_every_host_command_worked_and_the_second_copy_was_refused(host: Path) -> None:
    for scenario in ("plugin", "hooks-install", "missing-program"):
        codes = exits(host / scenario)
        refused = codes.pop("vaultkeeper-hooks-install-refused", None)
        assert set(codes.values()) == {0}, (scenario, codes)
        assert refused == (1 if scenario == "plugin" else None)
    said = (host / "plugin" / "vaultkeeper-hooks-install-refused.stderr.txt").read_text()
    assert "the plugin vaultkeeper@vaultkeeper (/HOME/." in said
    assert "a second copy would run each twice; nothing written" in said
    status = (host / "plugin" / "vaultkeeper-hooks-status.stdout.txt").read_text()
    assert "plugin vaultkeeper@vaultkeeper (enabled" in status
    assert "plugin vaultkeeper-recall@vaultkeeper (enabled" in status


def test_claude_ran_the_plugin_hook_its_mcp_server_and_its_skill() -> None:
    stream = lines(CLAUDE / "plugin" / "claude-p.stdout.txt")
    start = next(x for x in stream if x.get("subtype") == "hook_response")
    assert (start["hook_event"], start["exit_code"], start["outcome"]) == (
        "SessionStart", 0, "success",
    )  # fmt: skip
    init = next(x for x in stream if x.get("subtype") == "init")
    ours = {"name": "vaultkeeper", "path": "/REPO/plugins/vaultkeeper",
            "source": "vaultkeeper@vaultkeeper"}  # fmt: skip
    # 2.1.332 adds the plugin's "version" to each entry
    assert any(p.items() >= ours.items() for p in init["plugins"]), init["plugins"]
    assert "vaultkeeper:vaultkeeper" in init["skills"]
    assert [m["name"] for m in init["mcp_servers"]] == ["plugin:vaultkeeper:vaultkeeper"]
    results = {
        c["tool_use_id"]: x["tool_use_result"]
        for x in stream
        if x.get("type") == "user"
        for c in x["message"]["content"]
        if isinstance(c, dict) and c.get("type") == "tool_result"
    }
    waited = results["toolu_vk_plug_0"]  # Claude Code's WaitForMcpServers, when it was pending
    if isinstance(waited, dict):
        assert waited["ready"] is True
        assert waited["connected"] == ["plugin:vaultkeeper:vaultkeeper"]
    cited = results["toolu_vk_plug_1"]["structuredContent"]  # the plugin's server answered
    assert (cited["target"], cited["counted"], cited["count_after"]) == ("pin-test-clock", True, 3)
    assert_counted_once(CLAUDE / "plugin", "#toolu_vk_plug_1")


def assert_counted_once(folder: Path, call: str) -> None:
    """One use of the pattern in the journal: the MCP cite's; the session-end ingest knew
    the plugin's tool name and did not count the cite (or the answer's link) again."""
    journal = lines(folder / "vault-journal.jsonl")
    uses = [j for j in journal if j["action"] == "use"]
    assert len(uses) == 1 and uses[0]["target"] == "pin-test-clock"
    assert uses[0]["evidence"].startswith("mcp:tests/test_clock.py:12")
    assert call in uses[0]["evidence"] or call in json.dumps(uses[0])


def test_codex_ran_the_plugin_mcp_server() -> None:
    """Codex started the plugin's server (vault from $VAULTKEEPER_VAULT) and ran the
    approved cite through it."""
    assert_counted_once(CODEX / "plugin", "")


def test_claude_showed_the_person_that_vaultkeeper_is_missing() -> None:
    transcript = next((CLAUDE / "missing-program" / "claude-projects").rglob("*.jsonl"))
    shown = [
        x["attachment"]["content"]
        for x in lines(transcript)
        if x.get("attachment", {}).get("type") == "hook_system_message"
    ]
    assert len(shown) == 1 and shown[0].startswith(MISSING)


def test_codex_showed_the_person_that_vaultkeeper_is_missing() -> None:
    screen = (CODEX / "missing-program" / "tui-screen.txt").read_text()
    assert f"Hook · {MISSING}" in screen
    # and the session went on: the hook never blocks
    assert "Done, as in [[patterns/registry#pin-test-clock]]." in screen


def test_codex_trust_hashes_of_the_plugin_hooks_are_the_ones_status_computes() -> None:
    """The hashes Codex wrote when the person trusted the plugin hooks in /hooks equal
    codex_trust.hook_hash of this repository's hook files: `hooks status` reads them right,
    and the plugin files are the ones that were recorded."""
    written = codex_trust.trusted_hashes(CODEX / "plugin" / "trust" / "config.trusted.toml")
    computed = {}
    for name in ("vaultkeeper", "vaultkeeper-recall"):
        hooks = json.loads((REPO / "plugins" / name / "hooks" / "codex.json").read_text())
        for event, groups in hooks["hooks"].items():
            for gi, group in enumerate(groups):
                for hi, handler in enumerate(group["hooks"]):
                    label = codex_trust.label(event)
                    key = f"{name}@vaultkeeper:hooks/codex.json:{label}:{gi}:{hi}"
                    computed[key] = codex_trust.hook_hash(event, group, handler)
    assert len(computed) == 4 and written == computed
    status = (CODEX / "plugin" / "vaultkeeper-hooks-status-trusted.stdout.txt").read_text()
    assert status.count(f"[{codex_trust.TRUSTED}]") == 2


@pytest.mark.parametrize(
    ("host", "cache"),
    [(CLAUDE, "claude/plugins-cache"), (CODEX, "codex/plugins-cache")],
    ids=["claude-code", "codex"],
)
def test_the_installed_copy_is_this_repository_s_plugin(host: Path, cache: str) -> None:
    """Each host copied the plugins into its own cache when it installed them: the
    recording holds that copy, and it is the plugin this repository ships, file for file.
    A change to a shipped script fails here until the plugins are re-recorded with
    tools/hosts/record_plugins.py (never by copying files into the fixture by hand)."""
    for name in ("vaultkeeper", "vaultkeeper-recall"):
        copy = host / "plugin" / cache / "vaultkeeper" / name / "0.1.0"
        ours = REPO / "plugins" / name
        files = sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
        for rel in files:
            assert (copy / rel).read_text() == (ours / rel).read_text(), rel
