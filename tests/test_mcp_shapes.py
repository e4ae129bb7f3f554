"""The MCP tools' schemas stay equal to what the CLI and the core accept and return."""

from __future__ import annotations


def test_the_tool_schemas_offer_exactly_what_the_cli_accepts() -> None:
    from typing import get_args

    from vaultkeeper import config
    from vaultkeeper.apply.lifecycle import RESULTS
    from vaultkeeper.mcp.shapes import Kind, Result

    assert get_args(Kind) == config.ENTRY_KINDS
    assert set(get_args(Result)) == set(RESULTS)
