"""`apply ...`: carry out one decision (or a batch) through its gate."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import click

from vaultkeeper.commands.base import AS_JSON, DRY_RUN
from vaultkeeper.commands.decide import decide

_EVIDENCE = click.option(
    "--evidence",
    required=True,
    help="Receipt: a URL, or path:line of an existing file (read from the current folder, "
    "else from the vault's root).",
)
_EXPECT = click.option(
    "--expect-hash", help="Refuse if the target's text no longer has this sha256 (from scan)."
)


@click.group("apply")
def apply_group() -> None:
    """Carry out a decision through its gate; every decision is journaled.

    Outcomes: act (applied, exit 0), silence (left alone or already done, 0),
    defer (a gate said no; nothing changed, 1), ask (waiting for a person, 3).
    Every one is a line in state/journal.jsonl (`vaultkeeper log`).

    A PATH (and --evidence path:line) is read from the current folder, as lint
    takes paths: `./x.md` and `../research/notes.md:3` work from where you
    stand. A path that names no file there (and does not start with ./ or ../)
    is read from the vault's root, so projects/api/memory/x.md works anywhere.

    \b
    Example:
      vaultkeeper apply promote pin-test-clock --evidence https://ci.example/run/41
      vaultkeeper apply prune yaml-anchor-templates
      cd projects/api/memory && vaultkeeper apply prune ./old-retry-notes.md
      vaultkeeper apply merge pin-test-clock pin-the-clock-in-tests --evidence URL
    """


@apply_group.command("promote")
@click.argument("name")
@_EVIDENCE
@click.option(
    "--skills-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where skills live (default: skills/ in the vault), e.g. .claude/skills.",
)
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_promote(
    ctx: click.Context,
    name: str,
    evidence: str,
    skills_dir: Path | None,
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Promote registry pattern NAME into skills/NAME/SKILL.md (or merge into it).

    Gate: success count >= 2 read now from the registry, a receipt naming a URL
    or an existing file:line, and (with --expect-hash) the block unchanged
    since the report. Then one `**promoted:**` line joins the block. Promoted
    already: a new receipt joins the skill's Evidence, nothing else changes.

    \b
    Example:
      vaultkeeper apply promote pin-test-clock --evidence projects/api/notes.md:9
      vaultkeeper apply promote pin-test-clock --evidence https://ci.example/run/41 \\
          --skills-dir ~/.claude/skills --dry-run
    """
    from vaultkeeper.apply.decision import Decision

    where = skills_dir.expanduser().resolve() if skills_dir is not None else None
    decision = Decision("promote", name, evidence, expect_hash=expect_hash, skills_dir=where)
    decide(ctx, decision, dry_run, as_json)


@apply_group.command("prune")
@click.argument("target", metavar="NAME|PATH")
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_prune(
    ctx: click.Context, target: str, expect_hash: str | None, dry_run: bool, as_json: bool
) -> NoReturn:
    """Delete registry block NAME or entry file PATH, on a person's yes only.

    At a terminal (stdin and stdout both TTYs) it shows exactly what will go and
    asks; only y or yes deletes. Without one (an agent, a hook, cron) it never
    deletes: it queues the request for `vaultkeeper review` and exits 3. No flag
    changes that. Deleted content moves to .trash/; `vaultkeeper restore ID`
    puts it back. PATH is read from the current folder, else from the vault's
    root (see `vaultkeeper apply --help`).

    \b
    Example:
      vaultkeeper apply prune yaml-anchor-templates
      vaultkeeper apply prune projects/web/memory/old-webpack-config.md --dry-run
    """
    from vaultkeeper.apply.decision import Decision

    decide(ctx, Decision("prune", target, expect_hash=expect_hash), dry_run, as_json)


@apply_group.command("revalidate")
@click.argument("path", metavar="NAME|PATH")
@click.option("--pass", "passed", is_flag=True, help="The falsification condition held off.")
@click.option("--fail", "failed", is_flag=True, help="The lesson was falsified.")
@click.option("--reopen", is_flag=True, help="A stale active lesson: held_out.")
@_EVIDENCE
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_revalidate(
    ctx: click.Context,
    path: str,
    passed: bool,
    failed: bool,
    reopen: bool,
    evidence: str,
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Record the re-check of held-out entry NAME (or PATH) against its falsification_condition.

    NAME is the name the scan lists (the frontmatter name, else the file name);
    a name two entries share is refused, naming both paths. PATH and the
    receipt's path are read from the current folder, else from the vault's root. Pass: status active
    and the receipt joins provenance. Fail: status archived; for a
    validated-override entry a fail becomes an ask for a person (exit 3). A
    re-check before holdout_until is deferred (exit 1); only held_out entries
    are re-validated. --reopen takes a stale active entry (the report's "stale:
    re-validate") back to held_out, holdout_until today + $VAULTKEEPER_HOLDOUT_DAYS
    (default 7), so the next re-check decides whether it is still true.

    \b
    Example:
      vaultkeeper apply revalidate flaky-ci-retries --pass \\
          --evidence projects/api/research/ci-failure-survey.md:9
      vaultkeeper apply revalidate projects/api/memory/flaky-ci-retries.md --fail \\
          --evidence https://ci.example/run/77
      vaultkeeper apply revalidate projects/api/memory/paginate-with-cursors.md \\
          --reopen --evidence https://github.com/acme/api/issues/77
      cd projects/api/memory && vaultkeeper apply revalidate ./flaky-ci-retries.md \\
          --pass --evidence ../research/ci-failure-survey.md:9
    """

    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.entries.create import holdout_days_from_env

    # three flags, not one shared destination: with that, `--pass --fail` was the last one
    given = [
        flag for flag, on in (("--pass", passed), ("--fail", failed), ("--reopen", reopen)) if on
    ]
    # a usage error as click's own: the command's name and where to look (cli.py)
    if not given:
        raise click.UsageError("missing one of --pass, --fail or --reopen", ctx)
    if len(given) > 1:
        raise click.UsageError(
            f"give only one of --pass, --fail, --reopen (not {' and '.join(given)})", ctx
        )
    result = given[0][2:]
    days = holdout_days_from_env(os.environ) if result == "reopen" else None  # active -> held_out
    outcome = None if days is not None else result
    decision = Decision("revalidate", path, evidence, outcome, expect_hash, reopen_days=days)
    decide(ctx, decision, dry_run, as_json)


@apply_group.command("reactivate")
@click.argument("path", metavar="NAME|PATH")
@_EVIDENCE
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_reactivate(
    ctx: click.Context,
    path: str,
    evidence: str,
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Bring archived entry NAME (or PATH) back to active on new evidence.

    Whatever its label (the spec: archived -> active on new evidence); the
    receipt joins provenance as that evidence. NAME is resolved as for
    revalidate. A superseded entry is brought back by undoing its supersession:
    superseded_by and the newer entry's supersedes item go, and both files
    return byte for byte.

    \b
    Example:
      vaultkeeper apply reactivate old-webpack-config \\
          --evidence https://github.com/acme/web/pull/812
    """
    from vaultkeeper.apply.decision import Decision

    decision = Decision("reactivate", path, evidence, expect_hash=expect_hash)
    decide(ctx, decision, dry_run, as_json)


@apply_group.command("supersede")
@click.argument("old", metavar="OLD")
@click.option(
    "--by", "new", required=True, metavar="NEW", help="The newer entry that replaces OLD."
)
@_EVIDENCE
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_supersede(
    ctx: click.Context,
    old: str,
    new: str,
    evidence: str,
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Mark entry OLD as replaced by entry NEW; OLD stays in the vault, archived.

    OLD gets superseded_by: "[[NEW]]" and status archived; NEW lists OLD under
    supersedes. Gate: a receipt; NEW exists, is live and is not OLD; OLD is not
    superseded yet. `apply reactivate OLD` undoes it byte for byte.

    \b
    Example:
      vaultkeeper apply supersede projects/web/memory/old-webpack-config.md \\
          --by projects/web/memory/vite-build.md \\
          --evidence https://github.com/acme/web/pull/812
    """
    from vaultkeeper.apply.decision import Decision

    decision = Decision("supersede", old, evidence, expect_hash=expect_hash, by=new)
    decide(ctx, decision, dry_run, as_json)


@apply_group.command("skip")
@click.argument("target", metavar="NAME|PATH")
@click.option("--reason", required=True, help="Why the candidate is left alone.")
@AS_JSON
@click.pass_context
def apply_skip(ctx: click.Context, target: str, reason: str, as_json: bool) -> NoReturn:
    """Leave candidate NAME (or PATH) alone on purpose; the choice is journaled.

    \b
    Example:
      vaultkeeper apply skip screenshot-diff-review --reason "used weekly; count lags"
    """
    from vaultkeeper.apply.decision import Decision

    decide(ctx, Decision("skip", target, reason=reason), False, as_json)
