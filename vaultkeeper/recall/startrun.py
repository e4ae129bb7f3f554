"""``report --brief`` without click: the session-start hook's form, run by entry.py.

The hook runs ``vaultkeeper --vault V report --brief [--cwd DIR]`` at every session
start, and importing click and building the command tree cost that brief about as much
as the rest of its imports. ``run`` does what commands/scan.py's ``report --brief``
does -- the same notes, the same text, the same errors and exit codes as the click
group gives them -- and tests/test_entry.py compares the bytes of both ways.
"""

from __future__ import annotations

import sys


def run(vault: str, cwd: str | None) -> int:
    """The brief of ``vault`` (found and checked by entry.py) for a session in ``cwd``."""
    from vaultkeeper.errors import VaultkeeperError, internal_error
    from vaultkeeper.output import stdout_gone

    try:
        return _brief(vault, cwd)
    except VaultkeeperError as exc:
        return _error(str(exc), exc.exit_code)
    except BrokenPipeError:  # the host stopped reading: quiet, as the click group is
        return stdout_gone()
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _error(f"{where}{exc.strerror or exc}", 1)
    except Exception as exc:  # a bug: one line, as the click group says it
        return _error(internal_error(exc), 1)


def _brief(vault: str, cwd: str | None) -> int:
    from pathlib import Path

    from vaultkeeper import config
    from vaultkeeper.clock import now
    from vaultkeeper.output import echo as say
    from vaultkeeper.recall.start import render
    from vaultkeeper.report.candidates import load_report

    root = Path(vault)
    saved = load_report(root)
    if saved.note:
        say(f"vaultkeeper: note: {saved.note}", err=True)
    moment = now()
    report = saved.report
    if report is not None and report.vault != str(root):
        # a copied or moved vault: the brief's commands must name this vault, not the old one
        say(
            f"vaultkeeper: note: {config.STATE_DIR}/{config.LAST_REPORT_FILE}: made for the "
            f"vault at {report.vault}; shown for this one",
            err=True,
        )
        report = report._replace(vault=str(root))
    text = render(root, report, moment, Path.cwd() if cwd is None else Path(cwd))
    if text.endswith("\n"):
        say(text[:-1])
    else:  # never so (render ends every brief with a newline); click's own way then
        import click

        click.echo(text, nl=False)
    return 0


def _error(message: str, code: int) -> int:
    from vaultkeeper.output import echo
    from vaultkeeper.store.textsafe import inert

    echo(f"vaultkeeper: error: {inert(message)}", err=True)
    sys.stdout.flush()
    return code
