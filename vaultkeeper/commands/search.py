"""`search`: the vault's entries ranked for some words, at the terminal, as the MCP
``search`` tool and the recall hooks rank them (vaultkeeper.search.rank)."""

from __future__ import annotations

from functools import partial

import click

from vaultkeeper import config
from vaultkeeper.commands.base import print_json, vault_path


@click.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--project", "-p", metavar="P", help="Only entries under projects/P/.")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, config.SEARCH_MAX_LIMIT),
    default=config.SEARCH_DEFAULT_LIMIT,
    show_default=True,
    help="How many hits at most.",
)
@click.option("--archived", is_flag=True, help="Include archived and superseded entries.")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@click.pass_context
def search(
    ctx: click.Context,
    words: tuple[str, ...],
    project: str | None,
    limit: int,
    archived: bool,
    as_json: bool,
) -> None:
    """Find the entries that best match WORDS: lessons, decisions, notes, patterns.

    Ranked by bm25 over each entry's name, description, headings and body (a
    word in a name counts most; `retries` finds `retry`), as the MCP `search`
    tool and the recall hooks rank. Each hit shows its score, the path and
    line to open, and a snippet, masked. WORDS are plain words, never query
    syntax. Archived and superseded entries are left out unless --archived.
    The first search builds the index in state/vaultkeeper.db; later ones
    read again only the files changed since. Exit 0 with hits, 1 with none.

    \b
    Example:
      vaultkeeper search retry flaky ci
      vaultkeeper search --project api --limit 3 --json cursor pagination
    """
    from vaultkeeper.scan.last import last_report
    from vaultkeeper.search.rank import Searcher, found

    vault = vault_path(ctx)
    query = " ".join(words)
    report = partial(last_report, vault)
    hits = found(
        Searcher(vault),
        query,
        project=project,
        limit=limit,
        include_archived=archived,
        report=report,
    )
    if as_json:
        print_json({"hits": hits, "count": len(hits)})
    else:
        for hit in hits:
            stale = f" ({hit['may_be_stale']})" if hit.get("may_be_stale") else ""
            click.echo(f"{hit['score']:7.2f}  {hit['path']}:{hit['line']}  {hit['name']}{stale}")
            click.echo(f"         {hit['snippet']}")
        if not hits:
            click.echo("no entry matches", err=True)
    ctx.exit(0 if hits else 1)
