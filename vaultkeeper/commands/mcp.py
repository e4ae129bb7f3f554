"""`mcp`: serve the vault to an MCP host over stdio (needs the optional ``mcp`` extra).

The SDK is imported only inside the command, so importing the CLI (and every other
command) never loads it; without the extra the command says in one line how to get it.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from vaultkeeper import config
from vaultkeeper.commands.base import nonempty_path, now_utc, vault_path


@click.command("mcp")
@click.option(
    "--vault",
    "local_vault",
    type=click.Path(file_okay=False),
    callback=nonempty_path,
    default=None,
    help="The vault folder (the same as vaultkeeper's own --vault).",
)
@click.pass_context
def mcp(ctx: click.Context, local_vault: Path | None) -> None:
    """Serve the vault to an MCP host (Claude Code, Codex) over stdin and stdout.

    Tools: recall, search, read, cite, new_lesson, new_decision, report, status
    and apply_promote / apply_revalidate / apply_reactivate / apply_skip /
    apply_prune, through the same gates and journal as the commands here.
    apply_prune asks the person in the host's own dialog (they type the entry's
    name); a host without dialogs queues it for `vaultkeeper review`.
    Resources: vault://index and vault://entry/PATH. Needs the extra, in a
    clone of vaultkeeper: pipx install --force '.[mcp]'.

    \b
    Example:
      vaultkeeper mcp --vault ~/memory
      vaultkeeper --vault ~/memory hooks install claude-code --mcp
    """
    from vaultkeeper.errors import NoVaultError
    from vaultkeeper.store.vault import find_vault

    vault = (
        find_vault(local_vault, os.environ, Path.cwd())
        if local_vault is not None
        else vault_path(ctx)
    )
    if not (vault / config.INDEX_FILE).is_file():
        raise NoVaultError(f"{vault}: not a vault (no {config.INDEX_FILE})")
    from vaultkeeper.mcp import start, stop  # Ctrl-C works while the SDK loads, too

    stop.install()
    # os.urandom, not secrets (hmac and hashlib's OpenSSL): the first answer waits for this
    session = f"mcp-{now_utc():%Y%m%dT%H%M%SZ}-{os.urandom(3).hex()}"
    start.serve(vault, now_utc, session)
