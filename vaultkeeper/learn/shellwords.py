"""Shell commands in a transcript: which files they read, which patterns they count.

An agent reads vault files with ``cat``/``head``/``sed`` and counts a reuse with
``vaultkeeper use NAME`` from its shell tool; ingest reads both off the command line.
Only simple commands are understood (words split on ``;``, ``&&``, ``||``, ``|``, ``&``,
``bash -lc "..."`` unwrapped); a command that cannot be read says nothing.
"""

from __future__ import annotations

import shlex

from vaultkeeper import config

_READERS = frozenset({"cat", "head", "tail", "sed", "less", "more", "bat", "nl", "awk", "view"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})


def _simple_commands(command: object) -> list[list[str]]:
    """A shell command line's simple commands (words split on ; && || | &), or none when it
    cannot be read; ``bash -lc "..."`` unwrapped."""
    if isinstance(command, list) and all(isinstance(x, str) for x in command):
        if len(command) >= 3 and command[-2] in ("-c", "-lc"):
            command = command[-1]
        else:
            command = shlex.join(command)
    if not isinstance(command, str) or len(command) > config.TRANSCRIPT_MAX_COMMAND_CHARS:
        return []
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # an unclosed quote
        return []
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set(";&|"):
            out.append([])
        else:
            out[-1].append(token)
    return [words for words in out if words]


def shell_reads(command: object) -> list[str]:
    """The files a shell command reads with cat/head/sed/..."""
    return [
        token
        for words in _simple_commands(command)
        if words[0].rsplit("/", 1)[-1] in _READERS
        for token in words[1:]
        if not token.startswith("-") and ("/" in token or token.endswith(".md"))
    ]  # only paths: ingest keeps files in the vault


def shell_uses(command: object) -> list[str]:
    """The patterns a shell command counts with ``vaultkeeper [--vault V] use NAME`` (the
    words that are no option nor --vault's value are ``use NAME``)."""
    out: list[str] = []
    for words in _simple_commands(command):
        if words[0].rsplit("/", 1)[-1] != "vaultkeeper":
            continue
        args = [w for i, w in enumerate(words) if i and w[:1] != "-" and words[i - 1] != "--vault"]
        out += args[1:2] if args[:1] == ["use"] else []
    return out
