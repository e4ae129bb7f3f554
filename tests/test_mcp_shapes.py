"""The MCP tools' schemas stay equal to what the CLI and the core accept and return."""

from __future__ import annotations


def test_the_tool_schemas_offer_exactly_what_the_cli_accepts() -> None:
    from typing import get_args

    from vaultkeeper import config
    from vaultkeeper.apply.lifecycle import RESULTS
    from vaultkeeper.mcp.shapes import Kind, Result

    assert get_args(Kind) == config.ENTRY_KINDS
    assert set(get_args(Result)) == set(RESULTS)


def test_the_search_tool_returns_every_field_of_a_hit() -> None:
    from dataclasses import fields

    from vaultkeeper.mcp.shapes import Hit
    from vaultkeeper.search import rank as search

    assert list(Hit.__annotations__) == [f.name for f in fields(search.Hit)]
