"""The index files' own text: the marked section, a person's keywords, the budget.

What is read from and written into ``_index.md`` and its sub-indexes, apart from what is
listed in them (vaultkeeper.index.rows). Everything outside the markers is kept byte
for byte, and the ``-- keywords:`` a person added on a line survive regeneration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.links import Resolver, parse_link
from vaultkeeper.store.model import ParseError, decode, read_regular
from vaultkeeper.store.vault import iter_files, rel

ENTRY_LINE = re.compile(r"^[ \t]*[-*+][ \t]+!?\[\[([^\[\]\r\n]+)\]\]")


def is_index_name(name: str) -> bool:
    """Whether a file's own name (no folder) is ``_index.md`` or a sub-index's."""
    return name == config.INDEX_FILE or is_subindex_name(name)


def is_subindex_name(name: str) -> bool:
    return name.startswith(config.SUBINDEX_PREFIX) and name.endswith(".md") and "/" not in name


def is_index_file(rel_path: str) -> bool:
    """``_index.md``, a sub-index in ``_index/``, or one an older version left at the
    root (read as an index file until ``vaultkeeper index`` moves it)."""
    folder, _, name = rel_path.rpartition("/")
    if not folder:
        return is_index_name(name)
    return folder == config.SUBINDEX_DIR and is_subindex_name(name)


def subindex_name(folder: str) -> str:
    """The vault-relative path of the sub-index of top-level folder ``folder``."""
    return f"{config.SUBINDEX_DIR}/{config.SUBINDEX_PREFIX}{folder}.md"


def subindex_line(top: str) -> str:
    """The root's line for the sub-index of folder ``top``. It carries no count: two
    machines adding entries would each change it, and git would stop on it. The link is
    the basename, which Obsidian resolves wherever the file sits."""
    return f"- [[{config.SUBINDEX_PREFIX}{top}]] - {top}/"


def _section(text: str) -> str | None:
    start = text.find(config.INDEX_START)
    end = text.find(config.INDEX_END, start + 1) if start != -1 else -1
    return None if start == -1 or end == -1 else text[start + len(config.INDEX_START) : end]


def section_lines(text: str | None) -> list[str]:
    """The lines of ``text``'s marked section (none without one), cut at newlines only."""
    return [ln.removesuffix("\r") for ln in (_section(text or "") or "").split("\n")]


def with_section(text: str, lines: list[str]) -> str:
    """``text`` with the marked section holding ``lines``; every other byte kept."""
    nl = "\r\n" if "\r\n" in text else "\n"
    body = "".join(line + nl for line in lines)
    start = text.find(config.INDEX_START)
    end = text.find(config.INDEX_END, start + 1) if start != -1 else -1
    if start == -1 or end == -1:
        sep = "" if not text or text.endswith("\n\n") else (nl if text.endswith("\n") else nl * 2)
        return f"{text}{sep}{config.INDEX_START}{nl}{body}{config.INDEX_END}{nl}"
    return text[: start + len(config.INDEX_START)] + nl + body + text[end:]


def check_markers(name: str, text: str) -> None:
    """One start marker, then one end marker, or neither; anything else is refused.

    A start without its end once got a second pair appended, and the next run replaced
    everything between the first start and that end: a person's text, gone for good.
    """
    from vaultkeeper.errors import VaultkeeperError

    starts, ends = text.count(config.INDEX_START), text.count(config.INDEX_END)
    if (starts, ends) == (0, 0) or (
        (starts, ends) == (1, 1) and text.find(config.INDEX_START) < text.find(config.INDEX_END)
    ):
        return
    at = min(p for p in (text.find(config.INDEX_START), text.find(config.INDEX_END)) if p >= 0)
    line = text.count("\n", 0, at) + 1
    raise VaultkeeperError(
        f"{name}:{line}: needs exactly one {config.INDEX_START} followed by one "
        f"{config.INDEX_END} (found {starts} and {ends}); fix the markers by hand, "
        "nothing was changed"
    )


def measure(text: str) -> tuple[int, int]:
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return lines, len(text.encode("utf-8"))


def is_over_budget(text: str) -> bool:
    lines, size = measure(text)
    return lines > config.INDEX_MAX_LINES or size > config.INDEX_MAX_BYTES


def subindex_preamble(folder: str) -> str:
    return (
        f"# Index: {folder}/\n\nPart of [[{config.INDEX_FILE[:-3]}]]: the entries under {folder}/."
        " Lines between the markers are kept by `vaultkeeper index`.\n\n"
    )


Keywords = Mapping[tuple[str, str], str]  # (file, heading casefolded or "") -> keywords


def index_keywords(vault: Path) -> dict[tuple[str, str], str]:
    """The ``-- keywords:`` a person added on index lines, by (file, heading or "")."""
    rels = [rel(vault, p) for p in iter_files(vault)]
    current = {r: read_index(vault / r) for r in rels if is_index_file(r)}
    return keywords_of(current, Resolver(rels))


def keywords_of(
    current: Mapping[str, str | None], resolver: Resolver
) -> dict[tuple[str, str], str]:
    """The keywords on the index files' lines (``current``: name -> text), the first found
    for each (file, heading) kept."""
    keywords: dict[tuple[str, str], str] = {}
    for name, text in sorted(current.items()):
        for line in (_section(text or "") or "").splitlines():
            m = ENTRY_LINE.match(line)
            mark = line.rfind(config.INDEX_KEYWORDS_MARK)
            if not m or mark == -1:
                continue
            words = line[mark + len(config.INDEX_KEYWORDS_MARK) :].strip()
            target, sub, _ = parse_link(m.group(1))
            file = resolver.resolve(target, name).resolved
            if words and file is not None:
                keywords.setdefault((file, sub.casefold()), words)
    return keywords


def read_index(path: Path) -> str | None:
    if not path.exists():  # dangling symlinks too: no index yet
        return None
    try:
        return decode(read_regular(path))  # refuses a FIFO instead of blocking on it
    except ParseError as exc:
        from vaultkeeper.errors import VaultkeeperError

        line = f":{exc.line}" if exc.line else ""
        raise VaultkeeperError(f"{path}{line}: {exc.reason}; fix it before regenerating") from None


def bom_of(path: Path) -> bytes:
    """The UTF-8 byte order mark an index file opens with (kept when it is rewritten), or
    b"" (none, or unreadable)."""
    bom = b"\xef\xbb\xbf"
    try:
        with path.open("rb") as fh:
            return bom if fh.read(len(bom)) == bom else b""
    except OSError:
        return b""
