"""The MCP tools' schemas stay equal to what the CLI and the core accept and return."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_the_tool_schemas_offer_exactly_what_the_cli_accepts() -> None:
    from typing import get_args

    from vaultkeeper import config
    from vaultkeeper.apply.lifecycle import RESULTS
    from vaultkeeper.mcp.shapes import Kind, Result

    assert get_args(Kind) == config.ENTRY_KINDS
    assert set(get_args(Result)) == set(RESULTS)


def test_the_search_tools_schema_offers_every_field_of_a_cli_hit(tmp_path: Path) -> None:
    import datetime as dt
    from dataclasses import fields

    import anyio
    from mcp import Client

    from vaultkeeper.mcp.server import build
    from vaultkeeper.search.rank import Hit

    now = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)

    async def main() -> Any:
        async with Client(build(tmp_path, lambda: now, "s")) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            return listed["search"].output_schema

    schema = anyio.run(main)
    assert list(schema["$defs"]["Hit"]["properties"]) == [f.name for f in fields(Hit)]
