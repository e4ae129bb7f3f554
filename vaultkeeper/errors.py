"""One exception family, the exit codes, and what each exception means to a person.

``explain`` is the one mapping from an exception to its line and exit code; output.fail
says it at every edge that runs a command (cli.py, scan/classify.py, recall/startrun.py), an
MCP tool's error (mcp/server.py) and a batch's outcome (apply/batch.py) carry its line.
"""

from __future__ import annotations

# Exit codes mean the same thing for every command.
EXIT_OK = 0
EXIT_REFUSED = 1  # refused by a gate, bad input, lint errors, a failed check
EXIT_USAGE = 2  # usage error or no vault
EXIT_ASK = 3  # waiting for a person
EXIT_BROKEN_PIPE = 141  # stdout's reader went away (`| head`): 128 + SIGPIPE, no message
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2, as a shell reports it
INTERRUPTED = "interrupted"  # the one line for it: `vaultkeeper: interrupted`


class VaultkeeperError(Exception):
    """A failure the user can act on; the message is one line saying what and where."""

    exit_code = EXIT_REFUSED


class NoVaultError(VaultkeeperError):
    exit_code = EXIT_USAGE


class UsageError(VaultkeeperError):
    exit_code = EXIT_USAGE


class UnsafePathError(VaultkeeperError):
    """A target that would resolve outside the vault."""


class LockBusy(VaultkeeperError):
    """The writer lock stayed held by another command for the whole wait."""


class NotFoundError(VaultkeeperError):
    """An unknown entry, pattern or id."""


class GateRefused(VaultkeeperError):
    """A gate did not pass; nothing was written."""


class NeedsPerson(VaultkeeperError):
    """The decision waits for a person at a terminal."""

    exit_code = EXIT_ASK


def explain(exc: BaseException) -> tuple[str, int]:
    """The one line saying what ``exc`` means, and the exit code."""
    if isinstance(exc, VaultkeeperError):
        return str(exc), exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED, EXIT_INTERRUPTED
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        code = EXIT_BROKEN_PIPE if isinstance(exc, BrokenPipeError) else EXIT_REFUSED
        return f"{where}{exc.strerror or exc}", code
    return internal_error(exc), EXIT_REFUSED


def internal_error(exc: BaseException) -> str:
    """One line for an exception nobody expected (a bug): what, and where it was raised."""
    import os
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    why = f"{type(exc).__name__}{where}: {' '.join(str(exc).split()) or 'no message'}"
    return f"internal error ({why}); a bug in vaultkeeper, please report it"


class Interrupted(VaultkeeperError):
    """A signal ended a scan (scan/classify.py); its lock released, the state file idle."""

    def __init__(self, signum: int) -> None:
        import signal

        name = signal.Signals(signum).name
        super().__init__(f"scan interrupted by {name}; lock released, nothing saved")
        self.exit_code = 128 + signum
