"""VK5xx: credentials in any vault file, named by file, line and kind, never printed.

On for every vault, ours or not: a key pasted into a note reaches every session the
note is served to, whoever laid the vault out. The detectors are vaultkeeper.store.secrets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.lint.codes import Finding
from vaultkeeper.store import secrets
from vaultkeeper.store.model import ParseError, decode, read_regular
from vaultkeeper.store.vault import rel

_CODE = {secrets.PRIVATE_KEY: "VK501"}
_CODE.update({kind: "VK502" for kind in secrets.SHAPED if kind != secrets.PRIVATE_KEY})


def code_for(kind: str) -> str:
    return _CODE.get(kind, "VK503")


def check_secrets(rel_path: str, text: str, enabled: Callable[[str], bool]) -> Iterator[Finding]:
    """One finding per credential in ``text``; the message names its kind, not its value."""
    if not any(enabled(code) for code in ("VK501", "VK502", "VK503")):
        return
    for hit in secrets.find(rel_path):  # a token as a file or folder name: in every link
        why = f"{hit.kind} in the file's path (value not shown): rename it and rotate it"
        if enabled(code := code_for(hit.kind)):  # the path is the value here: masked
            yield Finding(secrets.served(rel_path), 1, 1, code, why)
    for hit in secrets.find(text):
        why = f"{hit.kind} in the file (value not shown): remove it from the vault and rotate it"
        if enabled(code := code_for(hit.kind)):
            yield Finding(rel_path, hit.line, hit.col, code, why)


def check_other_files(
    vault: Path, paths: Iterable[Path], enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    """Credentials in the vault's text files that are not notes (.txt, .json ...)."""
    if not any(enabled(code) for code in ("VK501", "VK502", "VK503")):
        return
    for path in paths:
        try:
            if path.stat().st_size > config.SECRET_SCAN_MAX_BYTES:
                continue  # an attachment, not something typed into the vault
            text = decode(read_regular(path))
        except (OSError, ParseError):
            continue  # binary or unreadable: nothing a person pasted a key into
        yield from check_secrets(rel(vault, path), text, enabled)
