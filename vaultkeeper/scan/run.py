"""The scan command's one implementation, shared by the click command and the fast entry.

``run`` is what ``vaultkeeper scan`` does, returning the exit code, its failures said by
errors.fail as the click group says them; entry.py calls it without click for the
session-end hook's no-op, commands/scan.py through click, and tests/test_entry.py
compares the bytes of both ways.

The throttled no-op (the hook's usual run) passes through here: nothing it does not
need is imported at the top (no typing, pathlib, datetime or json: output.py imports
json only to print some), and "now" is epoch nanoseconds unless $VAULTKEEPER_TODAY moves it.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple

from vaultkeeper.output import echo, fail, print_json

TYPE_CHECKING = False  # typing not imported on the no-op
if TYPE_CHECKING:
    from pathlib import Path

# --vault as given (or None) and the flags; a namedtuple: the no-op imports no typing
ScanArgs = namedtuple(
    "ScanArgs", ("vault", "force", "strict", "as_json", "fresh"), defaults=(False,)
)


def run(vault: Path | str, args: ScanArgs) -> int:
    """What ``vaultkeeper scan`` does; the exit code."""
    from vaultkeeper import clock
    from vaultkeeper.scan.classify import run_scan

    try:
        ns = clock.now_ns()  # real time, or None: $VAULTKEEPER_TODAY moves the date
        now = clock.now() if ns is None else ns
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
    except (Exception, KeyboardInterrupt) as exc:  # Ctrl-C after the scan's own handling too
        return fail(exc, args.as_json)
