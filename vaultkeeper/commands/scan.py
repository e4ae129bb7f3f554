"""`scan` and `report`: classify the vault, and show the last classification."""

from __future__ import annotations

import dataclasses

import click

from vaultkeeper import config
from vaultkeeper.commands.base import note, now_utc, print_json, vault_path


@click.command()
@click.option(
    "--force",
    is_flag=True,
    help=f"Skip the cooldown (like {config.ENV_FORCE}=1); never the lock or the re-entry guard.",
)
@click.option("--strict", is_flag=True, help="Exit 1 when problems were found.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.pass_context
def scan(ctx: click.Context, force: bool, strict: bool, as_json: bool) -> None:
    """Classify the vault into prune / promote / held-out candidates; change nothing.

    Prints `SELF-MAINTAIN: prune candidates N | promote eligible N | held-out
    due N`, then one line per candidate; unreadable entries go to stderr as
    `path[:line]: reason`. The report is also saved to state/last-report.json
    for `vaultkeeper report`. Throttled: inside the cooldown (1 hour since the
    last completed scan, or $SELF_MAINTAIN_COOLDOWN_MS), or while another scan
    runs, it prints nothing and exits 0. Only state/ is ever written.

    \b
    Example:
      vaultkeeper scan
      vaultkeeper scan --force --json
      SELF_MAINTAIN_FORCE=1 vaultkeeper --vault ~/memory scan --strict
    """
    # One implementation for both paths: entry.py runs this same function without click
    # for the hook's no-op, and test_entry.py proves the two give the same bytes.
    from vaultkeeper.scanrun import ScanArgs, run

    ctx.exit(run(vault_path(ctx), ScanArgs(None, force, strict, as_json)))


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--brief", is_flag=True, help="Short plain text for an agent's next session.")
@click.pass_context
def report(ctx: click.Context, as_json: bool, brief: bool) -> None:
    """Print the last completed scan's report, with when it was made.

    A session-end hook's output is lost; the next session reads the report
    here. --brief is what a session-start hook prints into the agent's
    context: the summary, the candidates, the report's age and the command
    for each kind, under 10,000 characters; nothing at all when no scan has
    completed yet.

    \b
    Example:
      vaultkeeper report
      vaultkeeper report --json
      vaultkeeper --vault ~/memory report --brief
    """
    from vaultkeeper.errors import UsageError
    from vaultkeeper.report import age_text, iso, load_report, render_brief

    if as_json and brief:
        raise UsageError("--json and --brief are two different outputs; choose one")
    vault = vault_path(ctx)
    saved = load_report(vault)
    if saved.note:
        note(saved.note)
    now = now_utc()
    if saved.report is None:
        if as_json:
            print_json(None)
        elif not brief:
            click.echo(f"no report yet: no scan has completed in {vault}; run `vaultkeeper scan`")
        return
    made = saved.report.generated_at
    report = saved.report
    if report.vault != str(vault):
        # a copied or moved vault: the brief's commands must name this vault, not the old one
        note(
            f"{config.STATE_DIR}/{config.LAST_REPORT_FILE}: made for the vault at "
            f"{report.vault}; shown for this one"
        )
        report = dataclasses.replace(report, vault=str(vault))
    if brief:
        click.echo(render_brief(report, now), nl=False)
        return
    if as_json:
        data = report.to_dict()
        data["age_seconds"] = int((now - made).total_seconds())
        print_json(data)
        return
    from vaultkeeper.output import print_report

    print_report(report, False, f"report made {iso(made)} ({age_text(made, now)})")
