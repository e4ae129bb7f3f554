"""``apply promote``: turn a proven registry pattern into a skill, or merge into one.

Gate: the success count read now from the file is at least PROMOTE_MIN_COUNT, the
evidence is a real receipt, the block is not promoted yet, and with ``expect_hash`` its
text is what the report saw. Then ``skills/<name>/SKILL.md`` is written (or merged:
evidence added, nothing overwritten) and one ``**promoted:**`` line joins the block.
Promoting it again with a new receipt adds that receipt to the skill's Evidence, the
skill found where the block's ``**promoted:**`` line says it went (``promoted_skill``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply.decision import SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, carry, check_index, locked, read_source
from vaultkeeper.apply.gate import check_hash, receipt_first, slug
from vaultkeeper.apply.notemerge import SKILL_FILE, evidence_span
from vaultkeeper.errors import GateRefused
from vaultkeeper.registry.blocks import RegistryBlock, find_block, load_registry, parsed_heads
from vaultkeeper.store.edit import insert_line_after, yaml_scalar
from vaultkeeper.store.model import split_lines
from vaultkeeper.store.vault import rel, resolve_inside

DESCRIPTION_MAX = 1024  # Claude Code's limit for a skill's description


@dataclass(frozen=True)
class SkillTarget:
    path: Path
    label: str  # how messages and diffs name it
    link: str  # what the **promoted:** line points at


def skill_target(vault: Path, block: RegistryBlock, skills_dir: Path | None) -> SkillTarget:
    name = slug(block.name)
    root = vault.resolve()
    if skills_dir is None:
        # Inside the vault a symlinked skills/ leading out is refused like any target.
        path = resolve_inside(vault, f"{config.SKILLS_DIR}/{name}/{SKILL_FILE}")
    else:
        path = (skills_dir.expanduser().resolve()) / name / SKILL_FILE
    if root in path.parents:
        relative = rel(root, path)
        return SkillTarget(path, relative, f"[[{relative[: -len('.md')]}]]")
    return SkillTarget(path, str(path), f"`{path}`")


def _body(block: RegistryBlock) -> list[str]:
    """The block's prose: its lines minus the heading and the counter lines."""
    counters = {block.count_line, block.last_used_line, block.promoted_line}
    lines = [
        line.rstrip("\r\n")
        for number, line in enumerate(split_lines(block.text), start=block.line)
        if number != block.line and number not in counters
    ]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _description(block: RegistryBlock, body: list[str]) -> str:
    first: list[str] = []
    for line in body:
        if not line.strip():
            break
        first.append(line.strip())
    text = " ".join(" ".join(first).split()) or (
        f"Reusable pattern {block.name}, promoted from the vault's pattern registry."
    )
    if len(text) > DESCRIPTION_MAX:
        text = text[: DESCRIPTION_MAX - 3].rstrip() + "..."
    return text


def _evidence_line(receipt: str, today: dt.date) -> str:
    return f"- {receipt} (added {today.isoformat()})"


def new_skill(vault: Path, block: RegistryBlock, receipt: str, today: dt.date, inside: bool) -> str:
    body = _body(block)
    origin = (
        f"[[{block.rel[: -len('.md')]}#{block.name}]]"
        if inside
        else f"`### {block.name}` in {block.rel} of the vault at {vault}"
    )
    lines = [
        "---",
        f"name: {slug(block.name)}",
        f"description: {yaml_scalar(_description(block, body))}",
        "---",
        "",
        f"# {block.name}",
        "",
        *body,
        *([""] if body else []),
        f"Promoted from {origin} on {today.isoformat()} (success count {block.count}).",
        "",
        "## Evidence",
        "",
        _evidence_line(receipt, today),
    ]
    return "\n".join(lines) + "\n"


def merged_skill(text: str, receipt: str, today: dt.date) -> str:
    """Add the receipt to the Evidence section (made if missing); never change the rest."""
    lines = split_lines(text)
    span = evidence_span(lines)
    if span is None:
        nl = "\r\n" if "\r\n" in text else "\n"
        sep = "" if text.endswith(nl * 2) or not text else (nl if text.endswith("\n") else nl * 2)
        return f"{text}{sep}## Evidence{nl}{nl}{_evidence_line(receipt, today)}{nl}"
    head, stop = span
    if any(receipt in line for line in lines[head + 1 : stop]):
        return text
    last = max((i for i in range(head, stop) if lines[i].strip()), default=head)
    if last == head:
        text = insert_line_after(text, last + 1, "")
        last += 1
    return insert_line_after(text, last + 1, _evidence_line(receipt, today))


def _has_receipt(path: Path, receipt: str) -> bool:
    if not receipt or not path.is_file():
        return False
    text = read_source(path, str(path)).text
    return merged_skill(text, receipt, dt.date(2000, 1, 1)) == text


def promote(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    today = now.date()
    # read before the writer lock
    checked = receipt_first(vault, decision.evidence, decision.target)
    with locked(vault, dry_run):
        block = find_block(vault, decision.target)  # counts are read now, never from a report
        skill = skill_target(vault, block, decision.skills_dir)
        _check_own_folder(vault, block, skill)
        receipt = (decision.evidence or "").strip()
        where = f"{block.rel}:{block.line}"
        if block.promoted is not None:  # a new receipt joins the skill's Evidence
            found = promoted_skill(vault, block) or (skill.path, skill.label)
            if _has_receipt(found[0], receipt):
                return outcome_for(
                    decision, SILENCE, f"already applied: {where} is promoted ({block.promoted})"
                )
            check_hash(decision.expect_hash, block.hash, f"### {block.name} ({where})")
            return add_receipt(vault, decision, block, found, checked.get(), today, dry_run)
        check_hash(decision.expect_hash, block.hash, f"### {block.name} ({where})")
        if block.count is None:
            raise GateRefused(str(block.problems()[0]))
        if block.count < config.PROMOTE_MIN_COUNT:
            raise GateRefused(
                f"{block.rel}:{block.count_line}: success count {block.count} is below "
                f"{config.PROMOTE_MIN_COUNT} (read from the file now)"
            )
        receipt = checked.get()
        return _write(vault, decision, block, skill, receipt, today, dry_run)


def _check_own_folder(vault: Path, block: RegistryBlock, skill: SkillTarget) -> None:
    """``### C#`` and ``### C++`` both make ``skills/c/``: the second would merge into the first."""
    if not skill.path.exists():
        return
    name = slug(block.name)
    other = next(
        (
            b
            for b in load_registry(vault)[0]
            if b.name != block.name and b.promoted is not None and slug(b.name, "") == name
        ),
        None,
    )
    if other is not None:
        raise GateRefused(
            f"{block.rel}:{block.line}: ### {block.name} and ### {other.name} "
            f"({other.rel}:{other.line}, promoted) would share {skill.label}; rename this one"
        )


def _write(
    vault: Path,
    decision: Decision,
    block: RegistryBlock,
    skill: SkillTarget,
    receipt: str,
    today: dt.date,
    dry_run: bool,
) -> Outcome:
    in_vault = vault.resolve() in skill.path.parents  # then it is a note the index lists
    if skill.path.exists():
        old = read_source(skill.path, skill.label)
        skill_change = Change(
            skill.path, skill.label, old.text, merged_skill(old.text, receipt, today), old.bom
        )
        did = f"merged the evidence into {skill.label}"
    else:
        text = new_skill(vault, block, receipt, today, in_vault)
        skill_change = Change(skill.path, skill.label, None, text)
        did = f"wrote {skill.label}"
    registry = read_source(resolve_inside(vault, block.path), block.rel)
    anchor = max(n for n in (block.line, block.count_line, block.last_used_line) if n)
    line = f"{config.PROMOTED_LABEL} {today.isoformat()} -> {skill.link}"
    registry_text = insert_line_after(registry.text, anchor, line)
    # a counter line after the heading or a counter line: no line of the index changes
    registry_change = Change(
        registry.path, block.rel, registry.text, registry_text, registry.bom, unlisted=True
    )
    heads = parsed_heads(block.path, block.rel, registry_text)  # the index reads it again
    after = next(h for h in heads if h.line == block.line)
    changes = [c for c in (skill_change, registry_change) if c.after != c.before]
    # the skill first: a crash before the registry edit re-merges
    return carry(
        vault, decision, changes, f"{did}; marked {block.rel}:{anchor + 1} promoted",
        hashes=(block.hash, after.hash), dry_run=dry_run, index=in_vault,
        extra={"skill": skill.label, "count": block.count, "path": block.rel},
    )  # fmt: skip


_LINK = re.compile(r"->\s*\[\[(?P<link>[^\]|#]+)(?:[|#][^\]]*)?\]\]")
_PATH = re.compile(r"->\s*`(?P<path>[^`]+)`")


def promoted_skill(vault: Path, block: RegistryBlock) -> tuple[Path, str] | None:
    """(the skill file, how messages name it) from the block's ``**promoted:**`` line.

    That line is vault text an agent may write: only a ``SKILL.md`` it names is taken
    (promote writes no other name), never another file inside or outside the vault."""
    text = block.promoted or ""
    link = _LINK.search(text)
    if link:
        path = resolve_inside(vault, link.group("link").strip() + ".md")
        return (path, rel(vault.resolve(), path)) if path.name == SKILL_FILE else None
    found = _PATH.search(text)
    if found:
        path = Path(found.group("path")).expanduser()
        return (path, str(path)) if path.is_absolute() and path.name == SKILL_FILE else None
    return None


def add_receipt(
    vault: Path,
    decision: Decision,
    block: RegistryBlock,
    skill: tuple[Path, str],
    receipt: str,
    today: dt.date,
    dry_run: bool,
) -> Outcome:
    """The skill with the receipt added to its Evidence, journaled by the caller; refused
    when the skill the registry names is gone."""
    path, label = skill
    where = f"{block.rel}:{block.promoted_line}"
    if not path.is_file():
        raise GateRefused(
            f"{where}: promoted to {label}, which is not there; nothing changed "
            "(restore the skill, or take the **promoted:** line out to promote it again)"
        )
    old = read_source(path, label)
    merged = merged_skill(old.text, receipt, today)
    day = (block.promoted or "").split(" ", 1)[0]
    if not dry_run and vault.resolve() in path.parents:
        check_index(vault)
    return carry(
        vault, decision, [Change(path, label, old.text, merged, old.bom)],
        f"added the receipt to the Evidence of {label} (promoted {day or 'before'}; "
        "nothing else changed)",
        dry_run=dry_run, extra={"skill": label, "count": block.count, "path": block.rel},
    )  # fmt: skip
