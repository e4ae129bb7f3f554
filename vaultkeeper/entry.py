"""The console script: ``vaultkeeper scan`` and ``report --brief`` without click, every
other command through it.

A session-end hook runs ``vaultkeeper scan`` after every session, almost always inside
the cooldown, where the whole run is starting Python and reading one small JSON file;
importing click and building the command tree would cost about as much again. So for
exactly the scan command's own forms -- ``[--vault PATH | --vault=PATH] scan`` with any
of ``--force``, ``--strict``, ``--json`` and ``--fresh`` once each -- this module reads argv itself,
calls the same function as the click command (scanrun.run) and so prints the same bytes.
Anything else (help, another command, an unusual argument, a vault that cannot be found
or a shell-completion request) goes to click untouched, which reports it. Nothing is
decided here before that hand-over, so a hand-over never follows a write.

The session-start brief, ``[--vault PATH] report --brief [--cwd DIR]``, and the hook's own
form ``[--vault PATH] start-hook`` (the host's JSON on stdin; hooks/session-start.sh) go
the same way (recall/startrun.py), for a folder that is a vault; anything else to click.

scanrun.run carries the click group's error handling for the scan: a change to the
group's belongs there too. tests/test_entry.py runs both ways and compares every byte.

The no-op's imports are its cost (Python itself starts in about 10 ms): this path finds
the vault with strings (vault.locate), not pathlib, and imports neither typing, datetime
nor json; tests/test_entry.py checks what it imports.
"""

from __future__ import annotations

import gc
import os
import sys

from vaultkeeper.scan.run import ScanArgs, run

_FLAGS = ("--force", "--strict", "--json", "--fresh")
_COMPLETE_VAR = "_VAULTKEEPER_COMPLETE"  # click's shell completion for prog "vaultkeeper"


def parse(args: list[str]) -> ScanArgs | None:
    """The scan command's arguments, or None when click should read them."""
    vault: str | None = None
    if args[:1] == ["--vault"] and len(args) >= 3:
        vault, rest = args[1], args[2:]
    elif args[:1] and args[0].startswith("--vault="):
        vault, rest = args[0][len("--vault=") :], args[1:]
    else:
        rest = args
    if rest[:1] != ["scan"]:
        return None
    flags = rest[1:]
    if any(f not in _FLAGS for f in flags) or len(set(flags)) != len(flags):
        return None
    return ScanArgs(
        vault, "--force" in flags, "--strict" in flags, "--json" in flags, "--fresh" in flags
    )


def _vault_first(args: list[str], equals: bool = False) -> tuple[str | None, list[str]]:
    """A leading ``--vault PATH`` (and, with ``equals``, ``--vault=PATH``) taken off:
    (the path or None, the arguments after it)."""
    if args[:1] == ["--vault"] and len(args) >= 3:
        return args[1], args[2:]
    if equals and args[:1] and args[0].startswith("--vault="):
        return args[0][len("--vault=") :], args[1:]
    return None, args


def recall_args(args: list[str]) -> tuple[str | None, str] | None:
    """(vault, host) for ``[--vault PATH] recall-hook HOST``, the recall hook's one form
    (hooks/recall.sh): never handed to click, whatever is wrong (recall/moment.py)."""
    vault, rest = _vault_first(args)
    if len(rest) != 2 or rest[0] != "recall-hook":
        return None
    from vaultkeeper.config import ENV_VAULT

    return (vault or os.environ.get(ENV_VAULT) or None), rest[1]


def start_args(args: list[str]) -> tuple[str | None] | None:
    """(vault,) for ``[--vault PATH] start-hook``, the session-start hook's one form
    (hooks/session-start.sh; the host's JSON on stdin): a hook's, not a command's."""
    vault, rest = _vault_first(args)
    return (vault,) if rest == ["start-hook"] else None


def brief_args(args: list[str]) -> tuple[str | None, str | None] | None:
    """(vault, cwd) for ``[--vault PATH] report --brief [--cwd DIR]``, the session-start
    hook's form (hooks/session-start.sh); None when click should read the arguments."""
    vault, rest = _vault_first(args, equals=True)
    if rest[:2] != ["report", "--brief"]:
        return None
    if len(rest) == 2:
        return vault, None
    if len(rest) == 4 and rest[2] == "--cwd" and rest[3] and not rest[3].startswith("-"):
        return vault, rest[3]
    return None


def _checked(vault: str | None) -> bool:
    """Whether the vault found is one (else click says why not, as for every command)."""
    if vault is None:
        return False
    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.store.vault import require_vault

    try:
        require_vault(vault)
    except (VaultkeeperError, OSError):
        return False
    return True


def _vault(given: str | None) -> str | None:
    """The vault as commands.base.vault_path finds it; None when click should say why not."""
    from vaultkeeper.store.vault import locate

    if given is not None and not (
        given and os.path.isdir(given) and os.access(given, os.R_OK)  # click.Path's checks
    ):
        return None
    try:
        return locate(given, os.environ, os.getcwd())
    except OSError:
        return None


def _no_raw_bytes() -> None:
    """A name read from disk may hold undecodable bytes (``\\udc9b`` after decoding): in a
    C/POSIX locale Python writes them back raw, and 0x9b is an 8-bit CSI to a terminal.
    Shown as a backslash escape instead, on both streams."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") == "surrogateescape":
            reconfigure(errors="backslashreplace")


def main() -> None:
    _no_raw_bytes()
    recall = recall_args(sys.argv[1:])
    if recall is not None:
        from vaultkeeper.recall.moment import main as recall_main

        gc.disable()  # as for the scan's no-op: a short run that makes no cycles
        sys.exit(recall_main(*recall))
    start = None if os.environ.get(_COMPLETE_VAR) else start_args(sys.argv[1:])
    found = None if start is None else _vault(start[0])
    if start is not None and _checked(found):
        from vaultkeeper.recall.startrun import hook

        assert found is not None
        gc.disable()  # as for the scan: one short run that makes no cycles worth collecting
        sys.exit(hook(found, os.path.abspath(sys.argv[0])))
    brief = None if os.environ.get(_COMPLETE_VAR) else brief_args(sys.argv[1:])
    found = None if brief is None else _vault(brief[0])
    if brief is not None and _checked(found):
        from vaultkeeper.recall.startrun import run as brief_run

        assert found is not None
        gc.disable()  # as for the scan: one short run that makes no cycles worth collecting
        sys.exit(brief_run(found, brief[1]))
    args = None if os.environ.get(_COMPLETE_VAR) else parse(sys.argv[1:])
    vault = None if args is None else _vault(args.vault)
    if args is not None and vault is not None:
        # One short burst of allocation that makes no reference cycles worth collecting:
        # the cyclic collector would only walk every imported module's objects again, and
        # once more at exit. Off for the run, and what is left is not walked at exit.
        gc.disable()
        code = run(vault, args)
        gc.freeze()
        sys.exit(code)
    from vaultkeeper.cli import main as click_main

    click_main()
