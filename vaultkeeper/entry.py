"""The console script: the hooks' forms and ``vaultkeeper scan`` without click, every
other command through it.

The throttled scan (a session-end hook's usual run) is Python's start and one small file;
click would cost as much again. So for exactly the scan's forms (``[--vault PATH] scan``
with ``--force``, ``--strict``, ``--json``, ``--fresh`` once each), the brief's, the
session-start hook's and the recall hook's, argv is read here and what the click command
calls is called, with the same bytes (tests/test_entry.py compares them and checks the
imports: no pathlib, typing, datetime or json). Anything else goes to click untouched.
"""

from __future__ import annotations

import gc
import os
import sys

from vaultkeeper.scan.classify import ScanArgs, run

TYPE_CHECKING = False  # typing is not imported on the no-op
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

_FLAGS = ("--force", "--strict", "--json", "--fresh")
_COMPLETE_VAR = "_VAULTKEEPER_COMPLETE"  # click's shell completion for prog "vaultkeeper"


def _vault_first(args: list[str], equals: bool = True) -> tuple[str | None, list[str]]:
    """A leading ``--vault PATH`` (and, with ``equals``, ``--vault=PATH``) taken off:
    (the path or None, the arguments after it)."""
    if args[:1] == ["--vault"] and len(args) >= 3:
        return args[1], args[2:]
    if equals and args[:1] and args[0].startswith("--vault="):
        return args[0][len("--vault=") :], args[1:]
    return None, args


def parse(args: list[str]) -> ScanArgs | None:
    """The scan command's arguments, or None when click should read them."""
    vault, rest = _vault_first(args)
    flags = rest[1:]
    if rest[:1] != ["scan"] or any(f not in _FLAGS for f in flags) or len(set(flags)) != len(flags):
        return None
    return ScanArgs(vault, *(flag in flags for flag in _FLAGS))


def recall_args(args: list[str]) -> tuple[str | None, str] | None:
    """(vault, host) for ``[--vault PATH] recall-hook HOST`` (never handed to click)."""
    vault, rest = _vault_first(args, equals=False)
    if len(rest) != 2 or rest[0] != "recall-hook":
        return None
    from vaultkeeper.config import ENV_VAULT

    return (vault or os.environ.get(ENV_VAULT) or None), rest[1]


def brief_args(args: list[str]) -> tuple[str | None, str | None] | None:
    """(vault, cwd) for ``[--vault PATH] report --brief [--cwd DIR]``, else None."""
    vault, rest = _vault_first(args)
    if rest[:2] != ["report", "--brief"]:
        return None
    if len(rest) == 2:
        return vault, None
    if len(rest) == 4 and rest[2] == "--cwd" and rest[3] and not rest[3].startswith("-"):
        return vault, rest[3]
    return None


def _vault(given: str | None, checked: bool = True) -> str | None:
    """The vault as commands.base.vault_path finds it (``checked``: one indeed); None when
    click should say why not."""
    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.store.vault import locate, require_vault

    if given is not None and not (
        given and os.path.isdir(given) and os.access(given, os.R_OK)  # click.Path's checks
    ):
        return None
    try:
        found = locate(given, os.environ, os.getcwd())
        if checked and found is not None:
            require_vault(found)
    except (VaultkeeperError, OSError):
        return None
    return found


def _no_raw_bytes() -> None:
    """Undecodable bytes of a name (``\\udc9b``) shown escaped, not raw (0x9b is a CSI)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") == "surrogateescape":
            reconfigure(errors="backslashreplace")


def _short_run(run: Callable[..., int], *args: object) -> NoReturn:
    """Run with the cyclic collector off (a short run makes no cycles worth collecting)."""
    gc.disable()
    code = run(*args)
    gc.freeze()
    sys.exit(code)


def main() -> None:
    _no_raw_bytes()
    argv = sys.argv[1:]
    recall = recall_args(argv)
    if recall is not None:
        from vaultkeeper.recall.moment import main as recall_main

        _short_run(recall_main, *recall)
    hook_form = not os.environ.get(_COMPLETE_VAR)
    start = _vault_first(argv, equals=False)
    if hook_form and start[1] == ["start-hook"] and (found := _vault(start[0])):
        from vaultkeeper.recall.startrun import hook

        _short_run(hook, found, os.path.abspath(sys.argv[0]))
    brief = brief_args(argv) if hook_form else None
    if brief is not None and (found := _vault(brief[0])):
        from vaultkeeper.recall.startrun import run as brief_run

        _short_run(brief_run, found, brief[1])
    args = parse(argv) if hook_form else None
    if args is not None and (found := _vault(args.vault, checked=False)):
        _short_run(run, found, args)
    try:  # importing click and every command: a Ctrl-C here is one line too, no traceback
        from vaultkeeper.cli import main as click_main
    except KeyboardInterrupt as exc:
        from vaultkeeper.output import fail

        sys.exit(fail(exc))
    click_main()
