"""verify's rows on the vault's own setup (1 store present, 2 frontmatter valid, 9 trigger
registered, 12 format): they only read the vault.
"""

from __future__ import annotations

from pathlib import Path

from vaultkeeper import config
from vaultkeeper.verify.common import (
    FAIL,
    PASS,
    SKIP,
    Context,
)


def store_present(ctx: Context) -> tuple[str, str]:
    dirs = (config.PROJECTS_DIR, config.PATTERNS_DIR, config.REFERENCES_DIR, config.STATE_DIR)
    missing = [d + "/" for d in dirs if not (ctx.vault / d).is_dir()]
    if not (ctx.vault / config.INDEX_FILE).is_file():
        missing.insert(0, config.INDEX_FILE)
    if missing:
        return FAIL, f"missing: {', '.join(missing)} (`vaultkeeper init` adds them)"
    return PASS, f"{config.INDEX_FILE}, " + ", ".join(d + "/" for d in dirs) + " present"


def _lint(ctx: Context, wanted: list[str]) -> tuple[str, str]:
    """The row's codes, by lint's own rules for this vault: a code `vaultkeeper lint`
    leaves off here by default (VK101 on someone's Obsidian vault) is not run either."""
    from vaultkeeper.lint import lint_vault
    from vaultkeeper.lint.codes import Selection
    from vaultkeeper.store.vault import is_ours

    default = Selection.parse(None, (), ours=is_ours(ctx.vault))
    codes = [c for c in wanted if default.enabled(c)]
    off = [c for c in wanted if c not in codes]
    not_run = f"; {'/'.join(off)} not run, as by `vaultkeeper lint` on this vault" if off else ""
    if not codes:
        return SKIP, f"{'/'.join(off)}: not run by `vaultkeeper lint` on this vault"
    result = lint_vault(ctx.vault, select=codes)
    if not result.findings:
        return PASS, f"{result.files} markdown files, no {'/'.join(codes)} findings{not_run}"
    more = len(result.findings) - 1
    tail = f" (+{more} more: vaultkeeper lint --select {','.join(codes)})" if more else ""
    return FAIL, f"{result.findings[0]}{tail}"


def frontmatter_valid(ctx: Context) -> tuple[str, str]:
    return _lint(ctx, ["VK001", "VK201"])


def format_sfs(ctx: Context) -> tuple[str, str]:
    return _lint(ctx, ["VK101", "VK102", "VK103"])


def trigger_registered(ctx: Context) -> tuple[str, str]:
    """A session-end hook or a cron line for this vault, and when the last scan completed."""
    from vaultkeeper.hosts.hooks import default_path
    from vaultkeeper.status.health import last_completed, where_installed

    hosts = {t: default_path(t, ctx.env) for t in ("claude-code", "codex")}
    where = where_installed(hosts, True, ctx.env, ctx.vault)
    here = ctx.vault.resolve()

    def ours(path: str | None) -> bool:
        return path is not None and Path(path).expanduser().resolve() == here

    found = [
        f"{h.target} SessionEnd hook in {h.path}"
        for h in where.hosts
        for handler in h.handlers
        if handler.event == "SessionEnd" and ours(handler.vault)
    ]
    found += [f"cron line ({' '.join(e.line.split()[:5])})" for e in where.cron if ours(e.vault)]
    when = last_completed(ctx.vault)
    last = f"last scan completed {when:%Y-%m-%d %H:%M} UTC" if when else "no scan completed yet"
    if not found:
        note = f"; {where.cron_note}" if where.cron_note else ""
        return FAIL, (
            "no session-end hook or cron line for this vault "
            f"(`vaultkeeper hooks install claude-code|codex|cron`){note}; {last}"
        )
    return PASS, f"{'; '.join(found)}; {last}"
