"""`lint`, `index` and `verify`: check the vault, keep its map, prove the setup."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from vaultkeeper import config
from vaultkeeper.commands.base import now_utc, vault_path
from vaultkeeper.output import Note, Shown, show


@click.command()
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
) -> int:
    """Check format, frontmatter schema, Obsidian links and the registry.

    Prints `path:line:col: CODE message` per finding, then a count; exit 1
    while an error remains (warnings alone exit 0). A lint of the whole vault
    with the default rules keeps its counts in state/ (when the vault has
    one) for `vaultkeeper status`. PATHS limit which files
    are reported; links are always resolved against the whole vault. Works
    on any Obsidian vault: where there is no patterns/ registry and no spec
    under references/, VK101, VK102, VK104, VK2xx and VK4xx run only when
    selected, unresolved links (VK301, VK305) are warnings, and Obsidian's
    templates folder is not checked for links.

    \b
    Example:
      vaultkeeper lint
      vaultkeeper lint --select VK3 ~/obsidian
      vaultkeeper lint --fix projects/api
    """
    from vaultkeeper.lint import find_lint_vault, lint_vault
    from vaultkeeper.store.textsafe import inert_line

    root = ctx.find_root().params.get("vault")
    vault = find_lint_vault(root, os.environ, Path.cwd(), paths)
    result = lint_vault(
        vault, paths=paths, cwd=Path.cwd(), select=select or None, ignore=ignore, fix=fix
    )
    if not (paths or select or ignore):  # the whole vault, every default rule: what status shows
        from vaultkeeper.lint.summary import save

        save(vault, result, now_utc())
    findings = [inert_line(str(f)) for f in result.findings]  # a file name may hold an escape
    fixed = [f"fixed {result.fixed} in {len(result.fixed_files)} file(s)"] if fix else []
    total = (
        f"{len(findings)} finding(s): {result.errors} error(s), "
        f"{result.warnings} warning(s) in {result.files} file(s)"
        + (f"; {result.fixable} fixable with --fix" if result.fixable and not fix else "")
        + ("; not fixed (needs a person)" if fix else "")
        if findings
        else f"all checks passed ({result.files} file(s))"
    )
    data = [f.to_dict() for f in result.findings] if as_json else None
    return show(Shown(data, (*findings, *fixed, total), code=int(bool(result.errors))), as_json)


@click.command()
@click.option(
    "--check", is_flag=True, help="Change nothing; exit 1 when the index is stale or missing."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def index(ctx: click.Context, check: bool, as_json: bool) -> int:
    """Regenerate the entry lines of _index.md between the vaultkeeper markers.

    One line per entry, grouped by folder and sorted: `- [[path]] -
    description`, plus anything after ` -- keywords: ` that a person wrote on
    the line. Text outside the markers is kept byte for byte. Over the load
    budget, _index.md links one _index/_index-<folder>.md per top-level folder.

    \b
    Example:
      vaultkeeper index
      vaultkeeper index --check   # in CI or pre-commit
    """
    from vaultkeeper.index.build import build_index
    from vaultkeeper.store.textsafe import inert_line

    result = build_index(vault_path(ctx, require=False), check=check)
    moved = Note(  # once: an older version's root sub-indexes, now in their folder
        f"vaultkeeper: {'would move' if check else 'moved'} {len(result.moved)} "
        f"sub-index file(s) from the vault's root into {config.SUBINDEX_DIR}/ "
        "(the links to them are unchanged)"
    )
    state = _what(config.INDEX_FILE, result.missing, check) if result.changed else "up to date"
    state = "regenerated" if state == "wrote" else state
    lines = (
        *((moved,) if result.moved else ()),
        *(Note(f"vaultkeeper: warning: {why}") for why in result.left),
        *(f"{_what(name, result.missing, check)} {name}" for name in result.changed),
        *(  # its lines kept as they were until fixed
            Note(
                inert_line(
                    f"vaultkeeper: error: {problem}; its index lines are kept as they "
                    "were until it can be read"
                )
            )
            if problem in result.unreadable
            else Note(inert_line(f"warning: {problem}"))
            for problem in result.problems
        ),
        *(Note(f"warning: {name} is still over the load budget") for name in result.over_budget),
        *(
            f"note: {name} is not linked from {config.INDEX_FILE}; delete it by hand"
            for name in result.unused
        ),
        f"{config.INDEX_FILE} {state}: {result.entries} entries, {result.root_lines} lines, "
        f"{result.root_bytes} bytes" + (" (split into sub-indexes)" if result.split else ""),
    )
    data = {  # each problem as its line: a Problem is a named tuple, JSON'd as a list
        **result.__dict__,
        "problems": [str(p) for p in result.problems],
        "unreadable": [str(p) for p in result.unreadable],
    }
    code = 1 if (check and result.changed) or result.unreadable else 0
    return show(Shown(data, lines, code=code), as_json)


def _what(name: str, missing: tuple[str, ...], check: bool) -> str:
    """What happened to a changed index file, or (``check``) what is wrong with it."""
    if not check:
        return "wrote"
    return "missing" if name in missing else "stale"


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.pass_context
def verify(ctx: click.Context, as_json: bool) -> int:
    """Run the spec's 12 checks plus vaultkeeper's own 2; exit 1 if any fails.

    Rows 1-12 are the spec's install-and-setup checks; 13 (supersession) and
    14 (merge) check vaultkeeper's own decisions the same way. Prints
    `N  check  PASS|FAIL|SKIP  detail` per row. Rows that run the
    scanner or the applier do it in a temporary folder (a copy of the vault's
    markdown, or a seeded fixture vault): verify never changes the vault.
    Row 9 passes when a session-end hook or cron line serves this vault.

    \b
    Example:
      vaultkeeper verify
      vaultkeeper --vault ~/memory verify --json
    """
    from vaultkeeper.store.textsafe import inert_line
    from vaultkeeper.verify import ROWS, verify_vault

    vault = vault_path(ctx, require=False)
    if as_json or not sys.stderr.isatty():
        result = verify_vault(vault, now=now_utc(), env=os.environ)
    else:  # a person at a terminal sees which row runs (some start processes)
        names = [name for name, _ in ROWS]
        with click.progressbar(
            length=len(names), label="verifying", file=sys.stderr, item_show_func=lambda s: s
        ) as bar:

            def step(name: str) -> None:  # the bar counts the rows already done
                bar.update(names.index(name) - bar.pos, name)

            result = verify_vault(vault, now=now_utc(), env=os.environ, progress=step)
    width = max(len(c.name) for c in result.checks)
    data = {"vault": result.vault, "checks": [c.to_dict() for c in result.checks]}
    lines = tuple(  # a detail may name a file: inert
        inert_line(f"{c.number:>2}  {c.name:<{width}}  {c.status:<4}  {c.detail}")
        for c in result.checks
    )
    return show(Shown(data, lines, code=int(bool(result.failed))), as_json)
