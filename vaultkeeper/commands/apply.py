"""`apply ...`: carry out one decision (or a batch) through its gate, and ask a person.

Paths are read as a person types them, as `lint` takes them: a path naming a file from
the current folder is that file (the applier gets its vault-relative path, so messages
and the journal name it as ever); one starting with ``./`` or ``../`` is always taken
from here; any other naming no file here is taken from the vault's root, so
``projects/api/memory/x.md`` works from anywhere. A name (no ``/``, no ``.md``) is an
entry or block name. Confinement to the vault is still the applier's.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from vaultkeeper import config
from vaultkeeper.apply.decision import DEFER, Decision
from vaultkeeper.commands.base import AS_JSON, DRY_RUN, now_utc, vault_path
from vaultkeeper.output import Shown, show
from vaultkeeper.store.textsafe import inert

_PATH_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def _is_path(text: str) -> bool:
    # as the applier tells a path from a name (apply/gate.py looks_like_path)
    return any(s in text for s in ("/", "\\")) or text.endswith(".md") or text.startswith(".")


def _from_here(text: str) -> bool:
    return text in (".", "..") or text.startswith(("./", "../"))


def _spelled(vault: Path, full: str) -> str:
    """``full`` (absolute, normalised) as the vault-relative path, else as it is."""
    root = str(vault)
    if full.startswith(root.rstrip(os.sep) + os.sep):
        return Path(full[len(root.rstrip(os.sep)) + 1 :]).as_posix()
    return full


def entry_path(vault: Path, text: str, cwd: Path | None = None) -> str:
    """What the applier should get for the entry path ``text`` typed in ``cwd``."""
    if not text or not _is_path(text) or text.startswith("~") or os.path.isabs(text):
        return text
    here = cwd if cwd is not None else Path.cwd()
    full = os.path.normpath(os.path.join(here, text))
    found = os.path.isfile(full) or (not text.endswith(".md") and os.path.isfile(full + ".md"))
    if not found and not _from_here(text):
        return text  # vault-relative, as the report and the journal spell it
    return _spelled(vault.resolve(), full)


def receipt(vault: Path, text: str | None, cwd: Path | None = None) -> str | None:
    """``--evidence``: its ``path:line`` read from the current folder by the same rule
    (a URL, a recorded receipt or an absolute path is left as it is)."""
    if text is None or _URL.match(text.strip()):
        return text
    m = _PATH_LINE.match(text.strip())
    if not m or os.path.isabs(m.group("path")) or m.group("path").startswith("~"):
        return text
    here = cwd if cwd is not None else Path.cwd()
    full = os.path.normpath(os.path.join(here, m.group("path")))
    if not os.path.isfile(full) and not _from_here(m.group("path")):
        return text
    return f"{_spelled(vault.resolve(), full)}:{m.group('line')}"


def typed_decision(vault: Path, typed: Any, cwd: Path | None = None) -> Any:
    """The Decision with its paths (target, --by, DROP, --evidence) as the applier takes
    them; a restore's target is a trash id, no path."""
    if typed.action == "restore":
        return typed
    return replace(
        typed,
        target=entry_path(vault, typed.target, cwd),
        by=None if typed.by is None else entry_path(vault, typed.by, cwd),
        drop=None if typed.drop is None else entry_path(vault, typed.drop, cwd),
        evidence=receipt(vault, typed.evidence, cwd),
    )


def show_and_ask(title: str, text: str, question: str) -> str:
    """Show vault text made inert (see textsafe), then ask: the screen shows the file."""
    click.echo(inert(title))
    click.echo("-" * 60)
    click.echo(inert(text), nl=not text.endswith("\n"))
    click.echo("-" * 60)
    return str(click.prompt(question, default="", show_default=False, prompt_suffix=" "))


def yes_to(title: str, text: str, question: str) -> bool:
    """A person's yes to a deletion shown as ``text``; Ctrl-C / Ctrl-D at the question is
    a clear no, journaled as one."""
    from vaultkeeper.apply.review import is_yes

    try:
        return is_yes(show_and_ask(title, text, question))
    except click.Abort:
        click.echo("")
        return False


def _confirm(plan: Any) -> bool:
    """The question for what the plan would delete: a prune's, or a merge's."""
    from vaultkeeper.apply.merge import MergePlan

    if isinstance(plan, MergePlan):
        title = f"{plan.title} `vaultkeeper restore ID` undoes it. It writes exactly this:"
        text, question = plan.diff_text, "Merge them? Only y or yes merges [y/N]:"
    else:
        count = "" if plan.count is None else f" (success count {plan.count})"
        title = (
            f"This {plan.kind} will be deleted{count}: {plan.where}. It moves to "
            f"{config.TRASH_DIR}/ and `vaultkeeper restore ID` brings it back."
        )
        text, question = plan.text, "Delete it? Only y or yes deletes [y/N]:"
    return yes_to(title, text, question)


def prune_confirm(dry_run: bool) -> Any:
    """A prompt only when a person is there: stdin and stdout both terminals. It asks
    before a prune and before a merge (both take an entry out of the vault)."""
    from vaultkeeper.apply.review import is_terminal

    return _confirm if not dry_run and is_terminal(sys.stdin, sys.stdout) else None


def ask_person(item: Any) -> str:
    """The person's answer to one queued ask; Ctrl-C or Ctrl-D is STOP, a clean end."""
    from vaultkeeper.apply.review import STOP, parse_answer

    changed = " (changed since it was queued: this is how it is now)" if item.changed else ""
    click.echo("")
    title = f"[{item.ask.id}] {item.title}{changed}\nasked {item.ask.ts}: {item.ask.reason}"
    question = "[y]es / [n]o / [s]kip / [q]uit:"
    try:
        answer = parse_answer(show_and_ask(title, item.text, question))
        while answer is None:
            click.echo("answer y, n, s (or nothing) to skip, or q")
            reply = click.prompt(question, default="", show_default=False, prompt_suffix=" ")
            answer = parse_answer(str(reply))
    except click.Abort:  # click.prompt's Ctrl-C / Ctrl-D
        click.echo("")
        return STOP
    return answer


def show_outcome(outcome: Any) -> None:
    """One result line right after the answer (a deletion's says the id that undoes it)."""
    click.echo(inert(f"{outcome.outcome}: {outcome.action} {outcome.target}: {outcome.reason}"))


def render_outcome(outcome: Any, as_json: bool) -> int:
    """Show one outcome (text or JSON); its exit code: 0 / 1 / 3."""
    from vaultkeeper.errors import GateRefused

    head = inert(f"{outcome.action} {outcome.target}: {outcome.reason}")
    if outcome.outcome == DEFER and not as_json:
        stopped = outcome.extra.get("stopped")  # an OS error part-way: something may be written
        raise GateRefused(f"{head} ({'stopped' if stopped else 'deferred; nothing changed'})")
    diff = inert(outcome.diff) if outcome.dry_run and outcome.diff else ""
    line = f"{diff}{'dry run: would ' if outcome.dry_run else ''}{outcome.outcome}: {head}"
    return show(Shown(outcome.to_dict(), (line,), code=outcome.exit_code), as_json)


def decide(ctx: click.Context, decision: Any, dry_run: bool, as_json: bool) -> int:
    """Carry out ``decision`` through its gate and show its outcome; the exit code."""
    from vaultkeeper.apply.batch import apply_decision

    # a deletion (prune, and merge: DROP leaves the vault) asks a person at a terminal
    confirm = prune_confirm(dry_run) if decision.action in ("prune", "merge") else None
    vault = vault_path(ctx)
    decision = typed_decision(vault, decision)  # paths as typed: from the current folder
    outcome = apply_decision(vault, decision, now_utc(), dry_run=dry_run, confirm=confirm)
    return render_outcome(outcome, as_json)


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
    /,
    name: str,
    skills_dir: Path | None,
    dry_run: bool,
    as_json: bool,
    **kw: Any,
) -> int:
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
    where = skills_dir.expanduser().resolve() if skills_dir is not None else None
    return decide(ctx, Decision("promote", name, skills_dir=where, **kw), dry_run, as_json)


@apply_group.command("prune")
@click.argument("target", metavar="NAME|PATH")
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_prune(ctx: click.Context, /, target: str, dry_run: bool, as_json: bool, **kw: Any) -> int:
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
    return decide(ctx, Decision("prune", target, **kw), dry_run, as_json)


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
    ctx: click.Context, /, path: str, passed: bool, failed: bool, reopen: bool, **kw: Any
) -> int:
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
    dry_run, as_json = kw.pop("dry_run"), kw.pop("as_json")
    decision = Decision("revalidate", path, result=outcome, reopen_days=days, **kw)
    return decide(ctx, decision, dry_run, as_json)


@apply_group.command("reactivate")
@click.argument("path", metavar="NAME|PATH")
@_EVIDENCE
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_reactivate(
    ctx: click.Context, /, path: str, dry_run: bool, as_json: bool, **kw: Any
) -> int:
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
    return decide(ctx, Decision("reactivate", path, **kw), dry_run, as_json)


@apply_group.command("supersede")
@click.argument("old", metavar="OLD")
@click.option("--by", required=True, metavar="NEW", help="The newer entry that replaces OLD.")
@_EVIDENCE
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_supersede(
    ctx: click.Context, /, old: str, dry_run: bool, as_json: bool, **kw: Any
) -> int:
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
    return decide(ctx, Decision("supersede", old, **kw), dry_run, as_json)


@apply_group.command("skip")
@click.argument("target", metavar="NAME|PATH")
@click.option("--reason", required=True, help="Why the candidate is left alone.")
@AS_JSON
@click.pass_context
def apply_skip(ctx: click.Context, target: str, reason: str, as_json: bool) -> int:
    """Leave candidate NAME (or PATH) alone on purpose; the choice is journaled.

    \b
    Example:
      vaultkeeper apply skip screenshot-diff-review --reason "used weekly; count lags"
    """
    return decide(ctx, Decision("skip", target, reason=reason), False, as_json)


@apply_group.command("merge")
@click.argument("keep", metavar="KEEP")
@click.argument("drop", metavar="DROP")
@_EVIDENCE
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_merge(ctx: click.Context, /, keep: str, dry_run: bool, as_json: bool, **kw: Any) -> int:
    """Fold duplicate DROP into KEEP: two registry blocks, or two memory files of a project.

    Counts add up, the later last used stays, DROP's text goes under KEEP, links to
    DROP are rewritten to KEEP, and DROP moves to .trash/: `vaultkeeper restore ID`
    undoes all of it. The report lists possible duplicates.

    \b
    Example:
      vaultkeeper apply merge pin-test-clock pin-the-clock-in-tests \\
          --evidence https://github.com/acme/api/pull/90 --dry-run
      vaultkeeper apply merge projects/api/memory/a.md projects/api/memory/b.md \\
          --evidence projects/api/research/ci-failure-survey.md:9
    """
    return decide(ctx, Decision("merge", keep, **kw), dry_run, as_json)


@apply_group.command("batch")
@click.argument("source", metavar="FILE|-", type=click.File("r", encoding="utf-8"))
@DRY_RUN
@click.pass_context
def apply_batch(ctx: click.Context, source: Any, dry_run: bool) -> int:
    """Apply a JSON list of decisions, each gated on its own; print a JSON list of outcomes.

    Each decision: action (promote | prune | revalidate | reactivate | supersede |
    skip | merge), target, and as needed evidence, result (pass | fail),
    expect_hash, reason, skills_dir (relative to the vault), by (supersede's NEW),
    drop (merge's DROP). Paths in the list are relative to the vault's root
    (the file means the same wherever it is run). Re-applying a batch changes
    nothing and says so
    (silence: already applied). Exit 3 if any decision waits for a person, else
    1 if refused, else 0.

    \b
    Example:
      echo '[{"action": "skip", "target": "pin-test-clock", "reason": "next week"}]' \\
          | vaultkeeper apply batch -
    """
    from vaultkeeper.apply.batch import run_batch
    from vaultkeeper.errors import VaultkeeperError

    # batch always prints JSON: its errors too, as --json makes every command's
    ctx.find_root().command.json_errors = True  # type: ignore[attr-defined]
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
        confirm=prune_confirm(dry_run),
    )
    return show(Shown([o.to_dict() for o in result.outcomes], code=result.exit_code), True)
