"""The report's "anchors" section: entries whose code moved under them.

One item per entry with a changed, moved or gone anchor, or a held-out entry whose
falsification condition (an anchor check) the check now meets; each says what follows.
The spec's summary line is unchanged. The findings come from vaultkeeper.anchors.vault.
Then "suggested anchors": per lesson, the files the session that wrote it read and
edited (vaultkeeper.anchors.vault), with the ``apply anchor`` command that accepts them.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from vaultkeeper.anchors.format import DECIDED, HOLDS, REOPEN, Finding, Result, Suggestion
from vaultkeeper.store.secrets import needs_serving, served


def _serve(text: Any) -> Any:
    return served(text) if isinstance(text, str) and needs_serving(text) else text


def to_dicts(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    return [
        {
            "path": _serve(f.path),
            "name": _serve(f.name),
            "status": _serve(f.status),
            "condition": _serve(f.condition),
            "follows": f.follows,
            "anchors": [{k: _serve(v) for k, v in r._asdict().items()} for r in f.results],
        }
        for f in findings
    ]


def from_dicts(items: Iterable[Mapping[str, Any]]) -> tuple[Finding, ...]:
    return tuple(
        Finding(
            str(i["path"]),
            str(i["name"]),
            str(i.get("status") or ""),
            i.get("condition"),
            tuple(Result(**r) for r in i.get("anchors") or ()),
            str(i.get("follows") or ""),
        )
        for i in items
    )


def stale_text(r: Result) -> str:
    """``src/x.py::helper is gone since abc1234`` (moved: ``... moved to PATH``)."""
    since = f" since {r.commit[:12]}" if r.commit else ""
    if r.state == "moved" and r.moved_to:
        return f"{r.at} moved to {r.moved_to}{since}"
    return f"{r.at} is {r.state}{since}"


def may_be_stale(f: Finding) -> str:
    """``may be stale: src/x.py::helper is gone since abc1234; ...``, or "" when no
    anchor of the entry is gone, moved or changed."""
    texts = [stale_text(r) for r in f.results if r.state in ("gone", "moved", "changed")]
    return "may be stale: " + "; ".join(texts) if texts else ""


def follows_text(f: Finding, vault: str | None = None) -> str:
    vk = "vaultkeeper" if vault is None else f"vaultkeeper --vault {shlex.quote(vault)}"
    path = shlex.quote(f.path)
    if f.follows == REOPEN:
        return f"re-validate: {vk} apply revalidate {path} --reopen --evidence RECEIPT"
    if f.follows in (DECIDED, HOLDS):
        at = str(f.condition).split(":", 1)[1].strip()
        result = next((r for r in f.results if r.at == at), None)
        commit = result.commit if result is not None and result.commit else "HEAD"
        verdict = "--fail" if f.follows == DECIDED else "--pass"
        evidence = shlex.quote(f"anchor:{at}@{commit}")
        return f"condition met: {vk} apply revalidate {path} {verdict} --evidence {evidence}"
    return "review the lesson against the code"


def text_lines(report: Any) -> list[str]:
    return [line_text(f) for f in report.anchors] + [suggestion_line(s) for s in report.suggested]


def accept_command(s: Suggestion, vault: str | None = None) -> str:
    """``vaultkeeper apply anchor ENTRY --add PATH ...``: every word shell-quoted."""
    vk = "vaultkeeper" if vault is None else f"vaultkeeper --vault {shlex.quote(vault)}"
    adds = " ".join(f"--add {shlex.quote(p)}" for p in s.anchors)
    return f"{vk} apply anchor {shlex.quote(s.path)} {adds}"


def suggestion_line(s: Suggestion) -> str:
    files = ", ".join(s.anchors)
    return (
        f"suggest   {s.name} -- anchors from the session that wrote it: {files} -- "
        f"accept: {accept_command(s)} -- {s.path}"
    )


def suggestion_dicts(items: Iterable[Suggestion]) -> list[dict[str, Any]]:
    return [
        {"path": _serve(s.path), "name": _serve(s.name), "anchors": list(s.anchors),
         "command": _serve(accept_command(s))}
        for s in items
    ]  # fmt: skip


def suggestions_from_dicts(items: Iterable[Mapping[str, Any]]) -> tuple[Suggestion, ...]:
    return tuple(
        Suggestion(str(i["path"]), str(i["name"]), tuple(str(p) for p in i["anchors"]))
        for i in items
    )


def to_dict(report: Any) -> dict[str, Any]:
    """The report's two anchor sections, as --json and the saved report hold them."""
    return {
        "anchors": to_dicts(report.anchors),
        "suggested_anchors": suggestion_dicts(report.suggested),
    }


def from_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "anchors": from_dicts(data.get("anchors") or ()),
        "suggested": suggestions_from_dicts(data.get("suggested_anchors") or ()),
    }


def line_text(f: Finding) -> str:
    what = "; ".join(stale_text(r) for r in f.results) or f"condition {f.condition}"
    return f"anchors   {f.name} -- {what} -- {follows_text(f)} -- {f.path}"


def stale_marks(report: Any) -> dict[str, str]:
    """Lesson path -> `` (may be stale: src/x.py::helper is gone since abc)`` for the
    report's lessons whose anchors are gone, moved or changed; {} without a report."""
    if report is None or not report.anchors:
        return {}
    return {f.path: f" ({text})" for f in report.anchors if (text := may_be_stale(f))}
