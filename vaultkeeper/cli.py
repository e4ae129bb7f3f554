"""The command line: parse options, call one core function, render its result.

Nothing here decides anything; errors become one line on stderr and an exit code here,
once (see errors.py for what each code means).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from vaultkeeper import __version__, config
from vaultkeeper.entry import print_json
from vaultkeeper.errors import EXIT_USAGE, VaultkeeperError, internal_error


class _Group(click.Group):
    """Turns every VaultkeeperError (and OS error) into one line and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultkeeperError as exc:
            _fail(str(exc), exc.exit_code)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            _fail(f"{where}{exc.strerror or exc}", 1)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors and ctx.exit(): click's own handling
        except Exception as exc:  # a bug: still one line, never a traceback
            _fail(internal_error(exc), 1)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"vaultkeeper: error: {message}", err=True)
    sys.exit(code)


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def vault_path(ctx: click.Context) -> Path:
    """The vault for this invocation (``--vault``, ``$VAULTKEEPER_VAULT``, or discovery)."""
    from vaultkeeper.vault import find_vault

    root = ctx.find_root()
    return find_vault(root.params.get("vault"), os.environ, Path.cwd())


def _path(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    # Path("") is Path("."): `--vault "$UNSET"` must not quietly mean the current folder
    if value == "":
        raise click.BadParameter("must not be empty (is the variable you meant to pass set?)")
    return None if value is None else Path(value)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    type=click.Path(file_okay=False),
    callback=_path,
    default=None,
    help=f"The vault folder (default: ${config.ENV_VAULT}, else the nearest folder "
    f"upwards holding {config.INDEX_FILE}).",
)
@click.version_option(__version__, prog_name="vaultkeeper")
def cli(vault: Path | None) -> None:
    """Keep an agent's markdown memory vault healthy.

    The scanner (`scan`) classifies entries into promote / prune / held-out
    candidates and never changes the vault; the applier (`apply ...`) carries
    out decisions through gates, journals every one, and deletes nothing
    without a person's explicit yes.

    \b
    Exit codes: 0 ok or nothing to do; 1 refused, bad input or findings;
                2 usage error or no vault; 3 waiting for a person.

    \b
    Example:
      vaultkeeper init ~/memory
      vaultkeeper --vault ~/memory scan
    """


@cli.command()
@click.argument("path", type=click.Path(), callback=_path, required=False)
@click.pass_context
def init(ctx: click.Context, path: Path | None) -> None:
    """Create a vault at PATH (default: --vault, else here); never changes an existing file.

    Lays out _index.md, projects/, patterns/registry.md, references/ with the
    vault's spec, state/ and a .gitignore keeping state/ out of git.

    \b
    Example:
      vaultkeeper init ~/memory
    """
    from vaultkeeper.create import init_vault

    explicit = ctx.find_root().params.get("vault")
    result = init_vault(path or explicit or Path("."))
    for name in result.created:
        click.echo(f"created {name}")
    for name in result.kept:
        click.echo(f"kept    {name} (exists)")
    for warning in result.warnings:
        click.echo(f"vaultkeeper: warning: {warning}", err=True)
    click.echo(f"vault ready at {result.vault}")


@cli.command()
@click.argument("kind", type=click.Choice(config.ENTRY_KINDS))
@click.argument("name")
@click.option("--description", "-d", required=True, help="One-line recall summary (indexed).")
@click.option("--project", "-p", help="Project folder for memory, decision and research.")
@click.option("--label", type=click.Choice(config.LABELS), help="Promotion weight label.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def new(
    ctx: click.Context,
    kind: str,
    name: str,
    description: str,
    project: str | None,
    label: str | None,
    as_json: bool,
) -> None:
    """Create an entry from its template and add it to _index.md.

    A memory (a new lesson) starts held_out with a quoted holdout_until a
    hold-out window ahead and label inferred; a pattern is a new ### block in
    the registry with success count 0.

    \b
    Example:
      vaultkeeper new memory retry-flaky-tests -p api -d "Retry flaky tests once, not forever"
      vaultkeeper new pattern bisect-first -d "Bisect before reading diffs"
    """
    from vaultkeeper.create import holdout_days_from_env, new_entry

    days = holdout_days_from_env(os.environ)
    result = new_entry(
        vault_path(ctx),
        kind,
        name,
        description,
        project=project,
        label=label,
        today=now_utc().date(),
        holdout_days=days,
    )
    if as_json:
        print_json(result.__dict__)
        return
    click.echo(f"created {result.path}:{result.line} ({kind} {name})")
    if result.index_line:
        click.echo(f"indexed {result.index_file}: {result.index_line}")


@cli.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def use(ctx: click.Context, name: str, as_json: bool) -> None:
    """Record one reuse of registry pattern NAME: success count + 1, last used today.

    Only those two lines of the registry change.

    \b
    Example:
      vaultkeeper use bisect-first
    """
    from vaultkeeper.use import record_use

    result = record_use(vault_path(ctx), name, now_utc().date())
    if as_json:
        print_json(result.__dict__)
        return
    click.echo(
        f"{result.name}: success count {result.count_before} -> {result.count_after}, "
        f"last used {result.last_used} ({result.path})"
    )


# Commands from the other modules register below (one import each).
# -- scan/report --
def _note(message: str) -> None:
    click.echo(f"vaultkeeper: note: {message}", err=True)


@cli.command()
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
    from vaultkeeper.entry import ScanArgs, run

    ctx.exit(run(vault_path(ctx), ScanArgs(None, force, strict, as_json)))


@cli.command()
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
        _note(saved.note)
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
        _note(
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
    from vaultkeeper.entry import print_report

    print_report(report, False, f"report made {iso(made)} ({age_text(made, now)})")


# -- apply --
def _render_outcome(ctx: click.Context, outcome: Any, as_json: bool) -> NoReturn:
    """Print one outcome (text or JSON) and exit with its code: 0 / 1 / 3."""
    from vaultkeeper.apply.decision import DEFER
    from vaultkeeper.errors import GateRefused

    if as_json:
        print_json(outcome.to_dict())
        ctx.exit(outcome.exit_code)
    if outcome.dry_run and outcome.diff:
        click.echo(outcome.diff, nl=False)
    head = f"{outcome.action} {outcome.target}: {outcome.reason}"
    if outcome.outcome == DEFER:
        stopped = outcome.extra.get("stopped")  # an OS error part-way: something may be written
        raise GateRefused(f"{head} ({'stopped' if stopped else 'deferred; nothing changed'})")
    click.echo(f"{'dry run: would ' if outcome.dry_run else ''}{outcome.outcome}: {head}")
    ctx.exit(outcome.exit_code)


def _show_and_ask(title: str, text: str, question: str) -> str:
    click.echo(title)
    click.echo("-" * 60)
    click.echo(text, nl=not text.endswith("\n"))
    click.echo("-" * 60)
    return str(click.prompt(question, default="", show_default=False, prompt_suffix=" "))


def _confirm_prune(plan: Any) -> bool:
    from vaultkeeper.apply.review import is_yes

    count = "" if plan.count is None else f" (success count {plan.count})"
    title = (
        f"This {plan.kind} will be deleted{count}: {plan.where}. It moves to "
        f"{config.TRASH_DIR}/ and `vaultkeeper restore ID` brings it back."
    )
    return is_yes(_show_and_ask(title, plan.text, "Delete it? Only y or yes deletes [y/N]:"))


def _prune_confirm(dry_run: bool) -> Any:
    """A prompt only when a person is there: stdin and stdout both terminals."""
    from vaultkeeper.apply.review import is_terminal

    return _confirm_prune if not dry_run and is_terminal(sys.stdin, sys.stdout) else None


def _decide(ctx: click.Context, decision: Any, dry_run: bool, as_json: bool) -> NoReturn:
    from vaultkeeper.apply.batch import apply_decision

    confirm = _prune_confirm(dry_run) if decision.action == "prune" else None
    vault = vault_path(ctx)
    outcome = apply_decision(vault, decision, now_utc(), dry_run=dry_run, confirm=confirm)
    _render_outcome(ctx, outcome, as_json)


_DRY_RUN = click.option("--dry-run", is_flag=True, help="Print the unified diff; write nothing.")
_AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
_EVIDENCE = click.option(
    "--evidence", required=True, help="Receipt: a URL, or path:line of an existing file."
)
_EXPECT = click.option(
    "--expect-hash", help="Refuse if the target's text no longer has this sha256 (from scan)."
)


@cli.group("apply")
def apply_group() -> None:
    """Carry out a decision through its gate; every decision is journaled.

    Outcomes: act (applied, exit 0), silence (left alone or already done, 0),
    defer (a gate said no; nothing changed, 1), ask (waiting for a person, 3).
    Every one is a line in state/journal.jsonl (`vaultkeeper log`).

    \b
    Example:
      vaultkeeper apply promote pin-test-clock --evidence https://ci.example/run/41
      vaultkeeper apply prune yaml-anchor-templates
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
@_DRY_RUN
@_AS_JSON
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
    or an existing file:line, not promoted yet, and (with --expect-hash) the
    block unchanged since the report. Then one `**promoted:**` line joins the block.

    \b
    Example:
      vaultkeeper apply promote pin-test-clock --evidence projects/api/notes.md:9
      vaultkeeper apply promote pin-test-clock --evidence https://ci.example/run/41 \\
          --skills-dir ~/.claude/skills --dry-run
    """
    from vaultkeeper.apply.decision import Decision

    where = skills_dir.expanduser().resolve() if skills_dir is not None else None
    decision = Decision("promote", name, evidence, expect_hash=expect_hash, skills_dir=where)
    _decide(ctx, decision, dry_run, as_json)


@apply_group.command("prune")
@click.argument("target", metavar="NAME|PATH")
@_EXPECT
@_DRY_RUN
@_AS_JSON
@click.pass_context
def apply_prune(
    ctx: click.Context, target: str, expect_hash: str | None, dry_run: bool, as_json: bool
) -> NoReturn:
    """Delete registry block NAME or entry file PATH, on a person's yes only.

    At a terminal (stdin and stdout both TTYs) it shows exactly what will go and
    asks; only y or yes deletes. Without one (an agent, a hook, cron) it never
    deletes: it queues the request for `vaultkeeper review` and exits 3. No flag
    changes that. Deleted content moves to .trash/; `vaultkeeper restore ID`
    puts it back.

    \b
    Example:
      vaultkeeper apply prune yaml-anchor-templates
      vaultkeeper apply prune projects/web/memory/old-webpack-config.md --dry-run
    """
    from vaultkeeper.apply.decision import Decision

    _decide(ctx, Decision("prune", target, expect_hash=expect_hash), dry_run, as_json)


@apply_group.command("revalidate")
@click.argument("path")
@click.option("--pass", "result", flag_value="pass", help="The falsification condition held off.")
@click.option("--fail", "result", flag_value="fail", help="The lesson was falsified.")
@_EVIDENCE
@_EXPECT
@_DRY_RUN
@_AS_JSON
@click.pass_context
def apply_revalidate(
    ctx: click.Context,
    path: str,
    result: str | None,
    evidence: str,
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Record the re-check of held-out entry PATH against its falsification_condition.

    Pass: status active and the receipt joins provenance. Fail: status archived;
    for a validated-override entry a fail becomes an ask for a person (exit 3).
    A re-check before holdout_until is deferred (exit 1); only held_out entries
    are re-validated.

    \b
    Example:
      vaultkeeper apply revalidate projects/api/memory/flaky-ci-retries.md --pass \\
          --evidence projects/api/research/ci-failure-survey.md:9
    """
    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.errors import UsageError

    if result is None:
        raise UsageError("revalidate needs --pass or --fail")
    decision = Decision("revalidate", path, evidence, result, expect_hash=expect_hash)
    _decide(ctx, decision, dry_run, as_json)


@apply_group.command("reactivate")
@click.argument("path")
@_EVIDENCE
@_EXPECT
@_DRY_RUN
@_AS_JSON
@click.pass_context
def apply_reactivate(
    ctx: click.Context,
    path: str,
    evidence: str,
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Bring archived entry PATH back to active on new evidence (receipt joins provenance).

    An inferred lesson is refused: it becomes active only through a passed hold-out.

    \b
    Example:
      vaultkeeper apply reactivate projects/web/memory/old-webpack-config.md \\
          --evidence https://github.com/acme/web/pull/812
    """
    from vaultkeeper.apply.decision import Decision

    decision = Decision("reactivate", path, evidence, expect_hash=expect_hash)
    _decide(ctx, decision, dry_run, as_json)


@apply_group.command("skip")
@click.argument("target", metavar="NAME|PATH")
@click.option("--reason", required=True, help="Why the candidate is left alone.")
@_AS_JSON
@click.pass_context
def apply_skip(ctx: click.Context, target: str, reason: str, as_json: bool) -> NoReturn:
    """Leave candidate NAME (or PATH) alone on purpose; the choice is journaled.

    \b
    Example:
      vaultkeeper apply skip screenshot-diff-review --reason "used weekly; count lags"
    """
    from vaultkeeper.apply.decision import Decision

    _decide(ctx, Decision("skip", target, reason=reason), False, as_json)


@apply_group.command("batch")
@click.argument("source", metavar="FILE|-", type=click.File("r", encoding="utf-8"))
@_DRY_RUN
@click.pass_context
def apply_batch(ctx: click.Context, source: Any, dry_run: bool) -> NoReturn:
    """Apply a JSON list of decisions, each gated on its own; print a JSON list of outcomes.

    Each decision: action (promote | prune | revalidate | reactivate | skip),
    target, and as needed evidence, result (pass | fail), expect_hash, reason,
    skills_dir (relative to the vault). Re-applying a batch changes nothing and
    says so (silence: already applied). Exit 3 if any decision waits for a
    person, else 1 if any was refused, else 0.

    \b
    Example:
      echo '[{"action": "skip", "target": "pin-test-clock", "reason": "next week"}]' \\
          | vaultkeeper apply batch -
    """
    from vaultkeeper.apply.batch import run_batch
    from vaultkeeper.errors import VaultkeeperError

    name = "<stdin>" if source.name == "<stdin>" else source.name
    try:
        text = source.read()
    except UnicodeDecodeError as exc:
        raise VaultkeeperError(
            f"{name}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); nothing applied"
        ) from None
    result = run_batch(
        vault_path(ctx),
        text,
        name,
        now_utc(),
        dry_run=dry_run,
        confirm=_prune_confirm(dry_run),
    )
    print_json([o.to_dict() for o in result.outcomes])
    ctx.exit(result.exit_code)


def _ask_person(item: Any) -> str:
    from vaultkeeper.apply.review import parse_answer

    changed = " (changed since it was queued: this is how it is now)" if item.changed else ""
    click.echo("")
    title = f"[{item.ask.id}] {item.title}{changed}\nasked {item.ask.ts}: {item.ask.reason}"
    question = "[y]es / [n]o / [s]kip / [q]uit:"
    answer = parse_answer(_show_and_ask(title, item.text, question))
    while answer is None:
        click.echo("answer y, n, s (or nothing) to skip, or q")
        reply = click.prompt(question, default="", show_default=False, prompt_suffix=" ")
        answer = parse_answer(str(reply))
    return answer


@cli.command()
@click.option(
    "--list", "list_only", is_flag=True, help="Only list what waits (no terminal needed)."
)
@click.option("--json", "as_json", is_flag=True, help="With --list: print JSON.")
@click.pass_context
def review(ctx: click.Context, list_only: bool, as_json: bool) -> None:
    """Walk the queued asks (deletions, override demotions) one at a time: yes / no / skip.

    For a person at a terminal: without one (stdin and stdout both TTYs) it
    refuses and exits 3. Yes carries the decision out, no closes it, skip (or
    an empty answer) leaves it queued.

    \b
    Example:
      vaultkeeper review
      vaultkeeper review --list --json
    """
    from vaultkeeper.apply import queue
    from vaultkeeper.apply.review import is_terminal
    from vaultkeeper.apply.review import review as walk
    from vaultkeeper.errors import NeedsPerson

    vault = vault_path(ctx)
    if list_only:
        waiting = queue.pending(vault)
        if as_json:
            print_json([a.to_dict() for a in waiting])
            return
        for ask in waiting:
            click.echo(f"{ask.id}  {ask.action} {ask.target}: {ask.reason}")
        click.echo(f"{len(waiting)} waiting for a person")
        return
    if not is_terminal(sys.stdin, sys.stdout):
        count = len(queue.pending(vault))
        if not count:  # nothing waits: nothing to do, not exit 3
            click.echo("0 waiting for a person")
            return
        raise NeedsPerson(
            f"review is for a person at a terminal (stdin and stdout must be terminals); "
            f"{count} ask(s) waiting; `vaultkeeper review --list` shows them"
        )
    result = walk(vault, now_utc(), _ask_person)
    for outcome in result.outcomes:
        click.echo(f"{outcome.outcome}: {outcome.action} {outcome.target}: {outcome.reason}")
    click.echo(f"{result.remaining} still waiting")


@cli.command()
@click.argument("trash_id", metavar="ID")
@_DRY_RUN
@_AS_JSON
@click.pass_context
def restore(ctx: click.Context, trash_id: str, dry_run: bool, as_json: bool) -> NoReturn:
    """Put deleted block or file ID back from .trash/ (ids: `vaultkeeper log`).

    The file is byte-identical to before the prune if nothing changed since;
    otherwise the block goes back between its old neighbours, or at the end of
    the file, and the output says which.

    \b
    Example:
      vaultkeeper restore 20261201-101500-a1b2c3
    """
    from vaultkeeper.apply.decision import Decision

    _decide(ctx, Decision("restore", trash_id), dry_run, as_json)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the records as a JSON list.")
@click.pass_context
def log(ctx: click.Context, as_json: bool) -> None:
    """Print the decision journal (state/journal.jsonl), newest last.

    \b
    Example:
      vaultkeeper log
      vaultkeeper log --json
    """
    from vaultkeeper.apply.journal import read

    result = read(vault_path(ctx))
    for problem in result.problems:
        click.echo(f"vaultkeeper: warning: {problem}", err=True)
    if as_json:
        print_json(list(result.records))
        return
    for r in result.records:
        tag = f"  [{r['id']}]" if r.get("id") else ""
        click.echo(
            f"{r.get('ts', '?')}  {str(r.get('outcome', '?')):<7} {str(r.get('action', '?')):<10} "
            f"{r.get('target', '?')}: {r.get('reason', '')}{tag}"
        )


# -- lint/index/verify --
@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--fix", is_flag=True, help="Make the safe repairs (ASCII glyphs, holdout_until).")
@click.option("--select", multiple=True, help="Only these codes or prefixes (VK3, VK301, ALL).")
@click.option("--ignore", multiple=True, help="Skip these codes or prefixes.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as a JSON list.")
@click.pass_context
def lint(
    ctx: click.Context,
    paths: tuple[Path, ...],
    fix: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    as_json: bool,
) -> None:
    """Check format, frontmatter schema, Obsidian links and the registry.

    Prints `path:line:col: CODE message` per finding, then a count; exit 1
    while an error remains (warnings alone exit 0). PATHS limit which files
    are reported; links are always resolved against the whole vault. Works
    on any Obsidian vault: where there is no patterns/ registry and no spec
    under references/, VK101, VK2xx and VK4xx run only when selected.

    \b
    Example:
      vaultkeeper lint
      vaultkeeper lint --select VK3 ~/obsidian
      vaultkeeper lint --fix projects/api
    """
    from vaultkeeper.lint import find_lint_vault, lint_vault

    root = ctx.find_root().params.get("vault")
    vault = find_lint_vault(root, os.environ, Path.cwd(), paths)
    result = lint_vault(
        vault, paths=paths, cwd=Path.cwd(), select=select or None, ignore=ignore, fix=fix
    )
    if as_json:
        print_json([f.to_dict() for f in result.findings])
    else:
        for finding in result.findings:
            click.echo(str(finding))
        if fix:
            click.echo(f"fixed {result.fixed} in {len(result.fixed_files)} file(s)")
        if result.findings:
            click.echo(
                f"{len(result.findings)} finding(s): {result.errors} error(s), "
                f"{result.warnings} warning(s) in {result.files} file(s)"
                + (f"; {result.fixable} fixable with --fix" if result.fixable and not fix else "")
                + ("; not fixed (needs a person)" if fix else "")
            )
        else:
            click.echo(f"all checks passed ({result.files} file(s))")
    sys.exit(1 if result.errors else 0)


@cli.command()
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when the index is stale.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def index(ctx: click.Context, check: bool, as_json: bool) -> None:
    """Regenerate the entry lines of _index.md between the vaultkeeper markers.

    One line per entry, grouped by folder and sorted: `- [[path]] -
    description`, plus anything after ` -- keywords: ` that a person wrote on
    the line. Text outside the markers is kept byte for byte. Over the load
    budget, _index.md links one _index-<folder>.md per top-level folder.

    \b
    Example:
      vaultkeeper index
      vaultkeeper index --check   # in CI or pre-commit
    """
    from vaultkeeper.index import build_index

    result = build_index(vault_path(ctx), check=check)
    if as_json:
        print_json(result.__dict__)
    else:
        verb = "stale" if check else "wrote"
        for name in result.changed:
            click.echo(f"{verb} {name}")
        for name in result.over_budget:
            click.echo(f"warning: {name} is still over the load budget", err=True)
        for name in result.unused:
            click.echo(f"note: {name} is not linked from {config.INDEX_FILE}; delete it by hand")
        state = "up to date" if not result.changed else ("stale" if check else "regenerated")
        click.echo(
            f"{config.INDEX_FILE} {state}: {result.entries} entries, {result.root_lines} lines, "
            f"{result.root_bytes} bytes" + (" (split into sub-indexes)" if result.split else "")
        )
    sys.exit(1 if check and result.changed else 0)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> None:
    """Run the spec's 12 install-and-setup checks; exit 1 if any fails.

    Prints `N  check  PASS|FAIL|SKIP  detail` per row. Rows that run the
    scanner or the applier do it in a temporary folder (a copy of the vault's
    markdown, or a seeded fixture vault): verify never changes the vault.
    Row 9 passes when a session-end hook or cron line serves this vault.

    \b
    Example:
      vaultkeeper verify
      vaultkeeper --vault ~/memory verify --json
    """
    from vaultkeeper.verify import verify_vault

    result = verify_vault(vault_path(ctx), now=now_utc(), env=os.environ)
    if as_json:
        print_json({"vault": result.vault, "checks": [c.to_dict() for c in result.checks]})
    else:
        width = max(len(c.name) for c in result.checks)
        for c in result.checks:
            click.echo(f"{c.number:>2}  {c.name:<{width}}  {c.status:<4}  {c.detail}")
    sys.exit(1 if result.failed else 0)


# -- hooks/status --
_TARGETS = ("claude-code", "codex", "cron")
_settings_option = click.option(
    "--settings",
    "settings_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"claude-code: the settings file (default {config.CLAUDE_SETTINGS}).",
)
_hooks_option = click.option(
    "--hooks",
    "hooks_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"codex: the hooks file (default {config.CODEX_HOOKS}).",
)


def _host_file(target: str, settings_file: Path | None, hooks_file: Path | None) -> Path:
    from vaultkeeper.errors import UsageError
    from vaultkeeper.hooks import default_path

    if settings_file is not None and target != "claude-code":
        raise UsageError(f"--settings is for claude-code; {target} takes --hooks or nothing")
    if hooks_file is not None and target != "codex":
        raise UsageError(f"--hooks is for codex; {target} takes --settings or nothing")
    given = settings_file if target == "claude-code" else hooks_file
    return (given or default_path(target, os.environ)).expanduser().absolute()


def _echo_change(change: Any, as_json: bool) -> None:
    if as_json:
        print_json(change.__dict__)
        return
    click.echo(f"{change.target}: {change.path}" + ("" if change.changed else " (unchanged)"))
    for action in change.actions:
        click.echo(f"  {action}")
    if change.backup:
        click.echo(f"  previous file kept as {change.backup}")


@cli.group()
def hooks() -> None:
    """Run the scan from a coding agent's session hooks, or from cron.

    `install claude-code|codex` merges two hooks into the host's settings: at
    session end the throttled scan (started in the background, so it never
    holds the host), at session start the last report as a short brief for the
    next session. `install cron` adds one crontab line. `uninstall` removes
    exactly what install added; `status` says what is installed where.

    \b
    Example:
      vaultkeeper --vault ~/memory hooks install claude-code
      vaultkeeper --vault ~/memory hooks install cron --schedule "17 8 * * *"
      vaultkeeper hooks status
    """


@hooks.command("install")
@click.argument("target", type=click.Choice(_TARGETS))
@_settings_option
@_hooks_option
@click.option(
    "--schedule", default=config.CRON_SCHEDULE, show_default=True, help="cron: when to scan."
)
@click.option("--print", "print_only", is_flag=True, help="cron: print the line, change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_install(
    ctx: click.Context,
    target: str,
    settings_file: Path | None,
    hooks_file: Path | None,
    schedule: str,
    print_only: bool,
    as_json: bool,
) -> None:
    """Register vaultkeeper with TARGET for the vault (absolute paths).

    A second install changes nothing; an install for another vault or a moved
    vaultkeeper updates our entry in place. Every other setting and every
    other tool's hook is kept; the previous settings file is kept as a backup.

    \b
    Example:
      vaultkeeper --vault ~/memory hooks install claude-code
      vaultkeeper --vault ~/memory hooks install codex
      vaultkeeper --vault ~/memory hooks install cron --print
    """
    from vaultkeeper import cron
    from vaultkeeper import hooks as hostfiles
    from vaultkeeper.errors import NoVaultError, UsageError

    vault = vault_path(ctx)
    marks = (config.INDEX_FILE, config.PROJECTS_DIR, config.PATTERNS_DIR)
    if not any((vault / name).exists() for name in marks):  # e.g. `--vault ~` by mistake
        raise NoVaultError(
            f"{vault}: not a vault (no {', '.join(marks)}): its scan would refuse it every "
            "time; pass the vault's folder, or create one with `vaultkeeper init`"
        )
    program = hostfiles.find_program(os.environ)
    if target != "cron":
        if print_only or schedule != config.CRON_SCHEDULE:
            raise UsageError(f"--schedule and --print are for cron, not {target}")
        path = _host_file(target, settings_file, hooks_file)
        _echo_change(hostfiles.install(target, path, vault, program), as_json)
        if target == "codex" and not as_json:
            click.echo(
                "  note: Codex runs hooks only with `codex_hooks = true` under [features] in "
                "~/.codex/config.toml, and asks you to trust new hooks (/hooks)"
            )
        return
    _host_file(target, settings_file, hooks_file)  # refuses --settings / --hooks
    if print_only:
        line = cron.cron_line(vault, program, schedule)
        print_json({"line": line}) if as_json else click.echo(line)
        return
    _echo_change(cron.install(vault, program, schedule, os.environ), as_json)


@hooks.command("uninstall")
@click.argument("target", type=click.Choice(_TARGETS))
@_settings_option
@_hooks_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_uninstall(
    ctx: click.Context,
    target: str,
    settings_file: Path | None,
    hooks_file: Path | None,
    as_json: bool,
) -> None:
    """Remove vaultkeeper's hooks (or this vault's crontab line), nothing else.

    \b
    Example:
      vaultkeeper hooks uninstall claude-code
      vaultkeeper --vault ~/memory hooks uninstall cron
    """
    from vaultkeeper import cron
    from vaultkeeper import hooks as hostfiles

    path = _host_file(target, settings_file, hooks_file)
    if target == "cron":
        _echo_change(cron.uninstall(vault_path(ctx), os.environ), as_json)
    else:
        _echo_change(hostfiles.uninstall(target, path), as_json)


@hooks.command("status")
@click.argument("target", type=click.Choice(_TARGETS), required=False)
@_settings_option
@_hooks_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_status(
    ctx: click.Context,
    target: str | None,
    settings_file: Path | None,
    hooks_file: Path | None,
    as_json: bool,
) -> None:
    """Say what is installed where, and when each vault's last scan completed.

    Every target, or only TARGET; no vault is needed.

    \b
    Example:
      vaultkeeper hooks status
      vaultkeeper hooks status claude-code --settings .claude/settings.json
    """
    from vaultkeeper.errors import NoVaultError
    from vaultkeeper.status import age_text, where_installed

    targets = [target] if target else list(_TARGETS)
    files = {
        t: _host_file(
            t, settings_file if t == "claude-code" else None, hooks_file if t == "codex" else None
        )
        for t in targets
        if t != "cron"
    }
    try:
        vault: Path | None = vault_path(ctx)
    except NoVaultError:
        vault = None
    where = where_installed(files, "cron" in targets, os.environ, vault)
    now = now_utc()
    if as_json:
        print_json(
            {
                "hosts": [
                    {**h.__dict__, "handlers": [x.__dict__ for x in h.handlers]}
                    for h in where.hosts
                ],
                "cron": [e.__dict__ for e in where.cron] if "cron" in targets else None,
                "cron_note": where.cron_note,
                "last_scans": [
                    {"vault": v, "last_completed": w.isoformat() if w else None}
                    for v, w in where.last_scans
                ],
                "hook_logs": [{"path": p, "last": last} for p, last in where.hook_logs],
            }
        )
        return
    for host in where.hosts:
        if host.note:
            click.echo(f"{host.target:<12} {host.note}")
        elif not host.handlers:
            click.echo(f"{host.target:<12} not installed in {host.path}")
        for h in host.handlers:
            click.echo(
                f"{host.target:<12} {h.event} (timeout {h.timeout} s) in {host.path}: {h.command}"
            )
    if "cron" in targets:
        if where.cron_note:
            click.echo(f"{'cron':<12} {where.cron_note}")
        elif not where.cron:
            click.echo(f"{'cron':<12} no vaultkeeper line in the crontab")
        for entry in where.cron:
            click.echo(f"{'cron':<12} {entry.line}")
    for v, when in where.last_scans:
        done = (
            f"{when:%Y-%m-%d %H:%M} UTC ({age_text((now - when).total_seconds())} ago)"
            if when
            else "never"
        )
        click.echo(f"{'last scan':<12} {v}: {done}")
    for log, last in where.hook_logs:
        click.echo(f"{'hook log':<12} {log}: {last}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the signals as one JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the vault's health signals: each figure, its healthy bound, a verdict.

    Candidates waiting (from the last report), held-out entries overdue by
    more than a week, decisions waiting for a person, lint errors, broken
    links and orphans, the age of the last completed scan (older than two
    days: the session-end hook probably never fires), the journal's size
    and _index.md against its load budget. Exit 1 when a signal fails.

    \b
    Example:
      vaultkeeper status
      vaultkeeper status --json
    """
    from vaultkeeper.status import FAIL, STEPS, vault_status

    vault = vault_path(ctx)
    if as_json or not sys.stderr.isatty():
        result = vault_status(vault, now_utc())
    else:
        with click.progressbar(
            length=len(STEPS), label="checking", file=sys.stderr, item_show_func=lambda s: s
        ) as bar:

            def step(name: str) -> None:  # the bar counts the steps already done
                bar.update(STEPS.index(name) - bar.pos, name)

            result = vault_status(vault, now_utc(), step)
    if as_json:
        print_json(result.to_dict())
    else:
        click.echo(f"vault {result.vault} at {result.generated_at}")
        rows = [("", "signal", "figure", "healthy", "")]
        rows += [(s.verdict, s.label, s.shown, s.bound, s.detail) for s in result.signals]
        widths = [4] + [max(len(r[i]) for r in rows) for i in range(1, 4)]  # ok/warn/fail
        for row in rows:
            cells = [cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)]
            click.echo("  ".join([*cells, row[4]]).rstrip())
        click.echo(f"overall: {result.verdict}")
    sys.exit(1 if result.verdict == FAIL else 0)


def main() -> None:
    try:
        cli(prog_name="vaultkeeper")
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        click.echo("vaultkeeper: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()

__all__ = ["cli", "main", "EXIT_USAGE"]
