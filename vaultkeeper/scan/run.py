"""The scan command's one implementation, shared by the click command and the fast entry.

``run`` is what ``vaultkeeper scan`` does, with the click group's error handling around
it, returning the exit code; entry.py calls it without click for the session-end hook's
no-op, commands/scan.py calls it through click, and tests/test_entry.py compares the
bytes of both ways.

The throttled no-op (the hook's usual run) passes through here: nothing it does not
need is imported at the top (no typing, pathlib, datetime or json: output.py imports
json only to print some), and "now" is epoch nanoseconds unless $VAULTKEEPER_TODAY moves it.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple

from vaultkeeper.errors import EXIT_INTERRUPTED, INTERRUPTED, VaultkeeperError, internal_error
from vaultkeeper.output import echo, print_json, stdout_gone

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path
    from typing import NamedTuple

    class ScanArgs(NamedTuple):
        vault: str | None  # --vault as given, or None
        force: bool
        strict: bool
        as_json: bool
        fresh: bool = False

else:  # the same tuple without importing typing
    ScanArgs = namedtuple("ScanArgs", ("vault", "force", "strict", "as_json", "fresh"))
    ScanArgs.__new__.__defaults__ = (False,)


def _error(message: str, code: int, as_json: bool) -> int:
    echo(f"vaultkeeper: error: {message}", err=True)
    if as_json:  # an agent asking for JSON gets JSON, errors included
        try:
            print_json({"error": message, "exit": code})
        except BrokenPipeError:  # the error's own code still says what went wrong
            stdout_gone()
    return code


def run(vault: Path | str, args: ScanArgs) -> int:
    """What cli.scan does, and the group's error handling around it; the exit code."""
    from vaultkeeper import clock
    from vaultkeeper.scan.classify import run_scan

    try:
        ns = clock.now_ns()  # real time, or None: $VAULTKEEPER_TODAY moves the date
        now: dt.datetime | int = clock.now() if ns is None else ns
        outcome = run_scan(
            vault, now=now, env=os.environ, force=args.force, pid=os.getpid(), fresh=args.fresh
        )
        for message in outcome.notes:
            echo(f"vaultkeeper: note: {message}", err=True)
        if outcome.report is None:
            if args.as_json:  # an agent parsing stdout gets JSON either way
                print_json({"skipped": outcome.skipped, "detail": outcome.detail})
            elif sys.stderr.isatty():  # a person wondering why nothing printed; hooks see nothing
                echo(f"vaultkeeper: note: scan skipped ({outcome.skipped}): {outcome.detail}", True)
            return 0
        from vaultkeeper.report.candidates import print_report  # not on the throttled path

        print_report(outcome.report, args.as_json)
        return 1 if args.strict and outcome.report.problems else 0
    except VaultkeeperError as exc:
        return _error(str(exc), exc.exit_code, args.as_json)
    except BrokenPipeError:
        return stdout_gone()
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _error(f"{where}{exc.strerror or exc}", 1, args.as_json)
    except KeyboardInterrupt:  # Ctrl-C after the scan's own signal handling: as cli.interrupted
        echo(f"vaultkeeper: {INTERRUPTED}", err=True)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line, as the click group says it
        return _error(internal_error(exc), 1, args.as_json)
