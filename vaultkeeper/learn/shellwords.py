"""Shell commands in a transcript: which files they read, which patterns they count.

An agent reads vault files with ``cat``/``head``/``sed`` and counts a reuse with
``vaultkeeper use NAME`` from its shell tool; ingest reads both off the command line.
A command line is split by ``shlex`` into simple commands (on ``;``, ``&&``, ``||``,
``|``, ``&``, newlines, and the parentheses and braces of subshells and groups), and
each is unwrapped as a shell would run it: leading ``VAR=value`` assignments, ``env``
(its options and assignments), ``time``, ``nohup``, ``command``, ``exec``, ``nice``;
``bash|sh|zsh [-l] -c "..."`` is read as the command line it runs; ``python -m
vaultkeeper`` is ``vaultkeeper``. Redirections (``> out``, ``2>&1``) are no words. A
command that cannot be read (an unclosed quote) says nothing.
"""

from __future__ import annotations

import re
import shlex
from typing import NamedTuple

from vaultkeeper import config

_READERS = frozenset({"cat", "head", "tail", "sed", "less", "more", "bat", "nl", "awk", "view"})
_PUNCTUATION = ";&|()<>\n"
_SEPARATORS = frozenset(";&|()\n")  # a token of these alone ends a simple command
_GROUP_WORDS = frozenset({"{", "}", "!", "then", "do", "else", "elif", "if", "while", "until"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_WRAPPERS = frozenset({"time", "nohup", "command", "exec", "builtin"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*")
_MAX_DEPTH = 4  # bash -c "bash -c '...'" nested deeper than this says nothing


class Command(NamedTuple):
    """One simple command, unwrapped: its words and the variables set before it."""

    words: list[str]
    env: dict[str, str]

    @property
    def program(self) -> str:
        return self.words[0].rsplit("/", 1)[-1]


def _tokens(command: str) -> list[str] | None:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
        lexer.whitespace = " \t\r"  # a newline separates commands, as ; does
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # an unclosed quote
        return None


def _split(tokens: list[str]) -> list[list[str]]:
    """Simple commands' words: split at separators; a redirection and its target dropped."""
    out: list[list[str]] = [[]]
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if set(token) <= set(_PUNCTUATION):
            if "<" in token or ">" in token:
                skip_next = not token.endswith("&") or token == "&>"  # 2>&1 has its target
                if out[-1] and out[-1][-1].isdigit():  # the fd of 2> is no word
                    out[-1].pop()
                continue
            out.append([])
            continue
        if not out[-1] and token in _GROUP_WORDS:
            continue
        out[-1].append(token)
    return [words for words in out if words]


def _unwrap(words: list[str], env: dict[str, str], depth: int) -> list[Command]:
    """The command a simple command runs, wrappers taken off (bash -c: its commands)."""
    while words:
        head = words[0].rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(words[0]):
            name, _, value = words[0].partition("=")
            env = {**env, name: value}
            words = words[1:]
        elif head == "env":
            words = words[1:]
            while words and (words[0].startswith("-") or _ASSIGNMENT.match(words[0])):
                if _ASSIGNMENT.match(words[0]):
                    name, _, value = words[0].partition("=")
                    env = {**env, name: value}
                elif words[0] in ("-u", "--unset", "-C", "--chdir", "-S"):
                    words = words[1:]
                words = words[1:]
        elif head in _WRAPPERS:
            words = words[1:]
            while words and words[0].startswith("-"):  # time -p, command -v, exec -a
                words = words[1:]
        elif head == "nice":
            words = words[1:]
            if words[:1] == ["-n"]:
                words = words[2:]
            elif words and words[0].startswith("-"):
                words = words[1:]
        elif head in _SHELLS:
            flags = [w for w in words[1:] if w.startswith("-")]
            if not any("c" in f.lstrip("-") for f in flags if not f.startswith("--")):
                return []  # a script run by the shell: not read
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            if script is None or depth >= _MAX_DEPTH:
                return []
            return _commands(script, env, depth + 1)
        elif _PYTHON.fullmatch(head) and words[1:3] == ["-m", "vaultkeeper"]:
            return [Command(["vaultkeeper", *words[3:]], env)]
        else:
            return [Command(words, env)]
    return []


def _commands(command: str, env: dict[str, str], depth: int) -> list[Command]:
    if len(command) > config.TRANSCRIPT_MAX_COMMAND_CHARS:
        return []
    tokens = _tokens(command)
    if tokens is None:
        return []
    return [c for words in _split(tokens) for c in _unwrap(words, env, depth)]


def commands(command: object) -> list[Command]:
    """A shell command line's simple commands, unwrapped; none when it cannot be read.
    A list (Codex's ``["bash", "-lc", "..."]``) is an argv."""
    if isinstance(command, list) and all(isinstance(x, str) for x in command):
        return _unwrap(list(command), {}, 0)
    if not isinstance(command, str):
        return []
    return _commands(command, {}, 0)


# options that take a value (``new``'s and the global ``--vault``)
_VALUE_OPTS = frozenset({"-d", "--description", "-p", "--project", "--label", "--falsify",
                         "--anchor", "--repo", "--vault"})  # fmt: skip


class Said(NamedTuple):
    """What a shell command line does that ingest reads (see ``said``)."""

    reads: list[str]  # files read with cat/head/sed/... (paths only: ingest keeps the vault's)
    uses: list[tuple[str, str | None]]  # NAME, the vault it names or None
    news: list[tuple[str, str, str | None, str | None]]  # KIND, NAME, --project, the vault


def said(command: object) -> Said:
    """The files a shell command reads, and per ``vaultkeeper [--vault V] use NAME`` and
    ``vaultkeeper new KIND NAME`` it runs what it names; ``VAULTKEEPER_VAULT=V`` set
    before one is its ``--vault V``, and one asked for its help (``-h``, ``--help``)
    runs nothing."""
    out = Said([], [], [])
    for c in commands(command):
        words = c.words[1:]
        if c.program in _READERS:
            out.reads.extend(
                w for w in words if not w.startswith("-") and ("/" in w or w.endswith(".md"))
            )
        if c.program != "vaultkeeper" or "-h" in words or "--help" in words:
            continue
        env = c.env.get(config.ENV_VAULT)
        args: list[str] = []
        opts = {} if env is None else {"--vault": env}
        i = 0
        while i < len(words):
            word = words[i]
            name, eq, value = word.partition("=")
            if word.startswith("--") and eq and name in _VALUE_OPTS:
                opts[name] = value
            elif word in _VALUE_OPTS and i + 1 < len(words):
                opts[word] = words[i + 1]
                i += 1
            elif word[:1] != "-":
                args.append(word)
            i += 1
        vault = opts.get("--vault")
        if args[:1] == ["use"] and args[1:]:
            out.uses.append((args[1], vault))
        elif args[:1] == ["new"] and len(args) > 2:
            out.news.append((args[1], args[2], opts.get("--project", opts.get("-p")), vault))
    return out
