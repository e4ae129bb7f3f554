"""Registering the MCP server with Claude Code (JSON) and Codex (TOML): minimal, exact edits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.hosts import mcp as mcp_install

PROGRAM = "/opt/vk/bin/vaultkeeper"
VAULT = Path("/home/me/memory vault")

CLAUDE = """{
    "numStartups": 41,
    "theme": "dark",
    "mcpServers": {
        "github": {"command": "gh-mcp", "args": ["--x"], "env": {"T": "\\u00e9"}},
        "files":   {
            "command": "fs-mcp"
        }
    },
    "projects": {"/a": {"allowedTools": []}},
    "tipsHistory": {"x": 1.50}
}
"""

CODEX = """# my codex settings
model = "o4"

[features]
codex_hooks = true

[mcp_servers.github]
command = "gh-mcp"
args = ["--x"]  # keep this comment

[mcp_servers.github.env]
TOKEN = "abc"

# a comment about profiles
[profiles.fast]
model = "o4-mini"
"""


def _other_bytes_kept(before: str, after: str, ours: str) -> None:
    """Everything except our inserted text is the original, byte for byte."""
    at = after.find(ours)
    assert at != -1
    assert after[:at] + after[at + len(ours) :] in (before, before.rstrip("\n") + "\n")


def test_claude_user_scope_adds_only_our_server_and_uninstall_restores_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".claude.json"
    path.write_text(CLAUDE)
    change = mcp_install.install("claude-code", path, VAULT, PROGRAM)
    assert change.changed and change.backup is not None
    after = path.read_text()
    data = json.loads(after)
    assert data["mcpServers"]["vaultkeeper"] == {
        "type": "stdio",
        "command": PROGRAM,
        "args": ["--vault", str(VAULT), "mcp"],
        "env": {},
    }
    # the other servers' text, odd spacing and escapes included, is untouched
    assert '"github": {"command": "gh-mcp", "args": ["--x"], "env": {"T": "\\u00e9"}}' in after
    assert '"files":   {\n            "command": "fs-mcp"\n        }' in after
    assert '"tipsHistory": {"x": 1.50}' in after
    assert Path(change.backup).read_text() == CLAUDE
    # idempotent: nothing written the second time
    again = mcp_install.install("claude-code", path, VAULT, PROGRAM)
    assert not again.changed and path.read_text() == after
    removed = mcp_install.uninstall("claude-code", path)
    assert removed.changed
    assert path.read_text() == CLAUDE
    assert not mcp_install.uninstall("claude-code", path).changed


def test_claude_project_scope_creates_mcp_json_and_uninstall_deletes_it_again(
    tmp_path: Path,
) -> None:
    path = mcp_install.default_path("claude-code", {"HOME": str(tmp_path)}, project=tmp_path)
    assert path == tmp_path / ".mcp.json"
    mcp_install.install("claude-code", path, VAULT, PROGRAM)
    assert json.loads(path.read_text())["mcpServers"]["vaultkeeper"]["command"] == PROGRAM
    removed = mcp_install.uninstall("claude-code", path)
    assert removed.changed and removed.backup is None
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # a file that was there before stays, emptied of our entry only
    path.write_text("{}\n")
    mcp_install.install("claude-code", path, VAULT, PROGRAM)
    mcp_install.uninstall("claude-code", path)
    assert path.read_text() == "{}\n"


def test_claude_update_moves_vault_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    path.write_text(CLAUDE)
    mcp_install.install("claude-code", path, VAULT, PROGRAM)
    first = path.read_text()
    change = mcp_install.install("claude-code", path, Path("/elsewhere"), PROGRAM)
    assert change.changed and change.actions[0].startswith("updated")
    second = path.read_text()
    assert second.replace("/elsewhere", str(VAULT)) == first


@pytest.mark.parametrize(
    "text",
    [
        '{"mcpServers": 3}',
        "[1, 2]",
        '{"a": 1,}',
        '{"mcpServers": {"vaultkeeper": 1, "vaultkeeper": 2}}',
    ],
)
def test_claude_refuses_files_it_cannot_edit_and_writes_nothing(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".claude.json"
    path.write_text(text)
    with pytest.raises(VaultkeeperError, match="nothing written"):
        mcp_install.install("claude-code", path, VAULT, PROGRAM)
    assert path.read_text() == text
    assert not (tmp_path / ".claude.json.vaultkeeper.bak").exists()


# What Codex needs for an MCP call in `codex exec` (recorded: codex-0.169.0/mcp approved
# per tool like this; codex-0.169.0/mcp-unapproved refused "requires approval").
APPROVALS = "".join(
    f'\n[mcp_servers.vaultkeeper.tools.{tool}]\napproval_mode = "approve"\n'
    for tool in config.MCP_AGENT_TOOLS
)


def test_codex_appends_one_table_and_uninstall_restores_bytes(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CODEX)
    change = mcp_install.install("codex", path, VAULT, PROGRAM)
    assert change.changed
    after = path.read_text()
    table = (
        f'[mcp_servers.vaultkeeper]\ncommand = "{PROGRAM}"\nargs = ["--vault", "{VAULT}", "mcp"]\n'
        + APPROVALS
    )
    assert after == CODEX + "\n" + table
    if sys.version_info >= (3, 11):
        import tomllib

        data = tomllib.loads(after)
        assert data["mcp_servers"]["vaultkeeper"]["args"] == ["--vault", str(VAULT), "mcp"]
        assert data["mcp_servers"]["github"]["env"] == {"TOKEN": "abc"}
    assert not mcp_install.install("codex", path, VAULT, PROGRAM).changed
    assert mcp_install.uninstall("codex", path).changed
    assert path.read_text() == CODEX


def test_codex_replaces_our_table_in_place_with_its_subtables(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    old = (
        '[mcp_servers.vaultkeeper]\ncommand = "old"\nargs = []\n\n'
        '[mcp_servers."vaultkeeper".env]\nX = "1"\n\n# next\n[profiles.a]\nmodel = "m"\n'
    )
    path.write_text(old)
    mcp_install.install("codex", path, Path("/v"), PROGRAM)
    assert path.read_text() == (
        f'[mcp_servers.vaultkeeper]\ncommand = "{PROGRAM}"\nargs = ["--vault", "/v", "mcp"]\n'
        + APPROVALS
        + '\n# next\n[profiles.a]\nmodel = "m"\n'
    )


def test_codex_creates_the_file_and_escapes_strings(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    odd = Path('/v/with "quote" and \\ back')
    mcp_install.install("codex", path, odd, PROGRAM)
    if sys.version_info >= (3, 11):
        import tomllib

        got = tomllib.loads(path.read_text())["mcp_servers"]["vaultkeeper"]["args"]
        assert got == ["--vault", str(odd), "mcp"]
    mcp_install.uninstall("codex", path)
    assert not path.exists() and not path.parent.exists()  # install made both


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib checks the forms we refuse")
@pytest.mark.parametrize(
    "text",
    [
        '[mcp_servers]\nvaultkeeper = { command = "x", args = [] }\n',
        'mcp_servers.vaultkeeper.command = "x"\n',
        "not = [valid\n",
    ],
)
def test_codex_refuses_forms_it_does_not_edit(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(VaultkeeperError, match="nothing written|Nothing written"):
        mcp_install.install("codex", path, VAULT, PROGRAM)
    assert path.read_text() == text


def test_a_header_inside_a_multiline_string_is_not_a_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = 'notes = """\n[mcp_servers.vaultkeeper]\n"""\n'
    path.write_text(text)
    mcp_install.install("codex", path, VAULT, PROGRAM)
    after = path.read_text()
    assert after.startswith(text)
    mcp_install.uninstall("codex", path)
    assert path.read_text() == text


def test_default_paths_follow_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert mcp_install.default_path("claude-code", env) == tmp_path / ".claude.json"
    assert mcp_install.default_path("codex", env) == tmp_path / ".codex" / "config.toml"
    with pytest.raises(VaultkeeperError):
        mcp_install.default_path("vim", env)


@pytest.mark.parametrize(
    ("text", "added"),
    [
        (
            '{"a": 1, "mcpServers": {"x": {"command": "y"}}}\n',
            '"x": {"command": "y"}, "vaultkeeper": {"type": "stdio"',
        ),
        ('{\r\n  "a": 1\r\n}\r\n', '  "a": 1,\r\n  "mcpServers": {\r\n    "vaultkeeper": {\r\n'),
    ],
)
def test_claude_json_keeps_its_layout_one_line_or_crlf(
    tmp_path: Path, text: str, added: str
) -> None:
    path = tmp_path / ".claude.json"
    path.write_bytes(text.encode())
    mcp_install.install("claude-code", path, VAULT, PROGRAM)
    after = path.read_bytes().decode()
    assert added in after
    assert (
        ("\r\n" in text) == ("\r\n" in after)
        and after.count("\n") == after.count("\r\n")
        or ("\r\n" not in text)
    )
    mcp_install.uninstall("claude-code", path)
    assert path.read_bytes() == text.encode()


def test_codex_crlf_file_keeps_crlf(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = 'model = "o4"\r\n\r\n[features]\r\nx = true\r\n'
    path.write_bytes(text.encode())
    mcp_install.install("codex", path, VAULT, PROGRAM)
    after = path.read_bytes().decode()
    assert after.startswith(text + "\r\n[mcp_servers.vaultkeeper]\r\n")
    assert after.count("\n") == after.count("\r\n")
    mcp_install.uninstall("codex", path)
    assert path.read_bytes() == text.encode()
