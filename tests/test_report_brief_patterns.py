"""state/brief-patterns.json: the brief's patterns as the last scan saw them, used only
while no registry file changed; missing, stale, racy, corrupt or foreign, the brief parses
the registry itself and says the same (never a traceback)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.report import brief_patterns

TODAY = dt.datetime.now(dt.timezone.utc).date()


def block(name: str, count: int, days_ago: int, prose: str) -> str:
    used = TODAY - dt.timedelta(days=days_ago)
    return (
        f"### {name}\n{prose}\nmore of it.\n\n**success count:** {count}\n**last used:** {used}\n\n"
    )


def registry(*blocks: str) -> str:
    return "# Pattern registry\n\n" + "".join(blocks)


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            config.REGISTRY_FILE: registry(
                block("alpha", 4, 3, "Alpha keeps the cache warm."),
                block("beta", 9, 1, "Beta pins the clock."),
                block("gamma", 0, 5, "Gamma retries once."),
            ),
            "patterns/more.md": registry(block("delta", 6, 2, "Delta splits the batch.")),
        }
    )


def facts(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.BRIEF_PATTERNS_FILE


def scan(vault: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code in (0, 1), result.output


def brief(vault: Path) -> str:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "report", "--brief"])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return re.sub(r"\([^)]* ago\)", "(AGO)", result.stdout)


def patterns_part(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ") and "#" in line]


def live(vault: Path) -> str:
    """The brief when nothing was saved: the registry parsed now."""
    saved = facts(vault).read_bytes() if facts(vault).exists() else None
    if saved is not None:
        facts(vault).unlink()
    try:
        return brief(vault)
    finally:
        if saved is not None:
            facts(vault).write_bytes(saved)


def test_a_scan_saves_what_the_brief_shows(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # files just written are kept (else a scan fast enough to start within RACY_NS of
    # the fixture's writes saves no stat, and the test fails by the clock)
    monkeypatch.setattr(brief_patterns, "RACY_NS", 0)
    scan(vault)
    data = json.loads(facts(vault).read_text())
    assert [row[0] for row in data["patterns"]] == ["beta", "delta", "alpha", "gamma"]
    assert data["total"] == 4 and data["patterns"][0][4] == "Beta pins the clock. more of it."
    assert brief_patterns.load(vault, 250) is not None
    assert brief(vault) == live(vault)
    assert patterns_part(brief(vault))[0].startswith("- beta (success count 9")


def test_a_registry_changed_since_the_scan_is_read_again(vault: Path) -> None:
    scan(vault)
    path = vault / config.REGISTRY_FILE
    path.write_text(path.read_text().replace("**success count:** 4", "**success count:** 20"))
    assert brief_patterns.load(vault, 250) is None
    assert patterns_part(brief(vault))[0].startswith("- alpha (success count 20")


def test_a_registry_file_added_or_gone_since_the_scan(vault: Path) -> None:
    scan(vault)
    (vault / "patterns" / "new.md").write_text(registry(block("eps", 50, 1, "Eps is new.")))
    assert patterns_part(brief(vault))[0].startswith("- eps (success count 50")
    (vault / "patterns" / "new.md").unlink()
    (vault / "patterns" / "more.md").unlink()
    assert not any("delta" in line for line in patterns_part(brief(vault)))


def test_a_file_written_as_the_scan_read_it_is_not_trusted(vault: Path) -> None:
    from vaultkeeper.registry.delta import load_heads as cached_heads
    from vaultkeeper.scan.cache import ScanCache

    cache = ScanCache()
    heads, _ = cached_heads(vault, cache)
    brief_patterns.save(vault, heads, 0, cache.registry_keys)  # all "changed during the scan"
    data = json.loads(facts(vault).read_text())
    assert set(data["registry"].values()) == {None}
    assert brief_patterns.load(vault, 250) is None
    assert brief(vault) == live(vault)


def test_the_scans_own_stat_keys_are_trusted_only_when_settled(vault: Path) -> None:
    """The scan's run gives each registry file's key as it stat'ed it before reading: a
    file changed within RACY_NS of the scan's start is saved untrusted (None)."""
    from vaultkeeper.registry.delta import load_heads as cached_heads
    from vaultkeeper.scan.cache import ScanCache

    cache = ScanCache()
    heads, _ = cached_heads(vault, cache)
    keys = cache.registry_keys
    assert keys and None not in keys.values()
    newest = max(max(k[3], k[4]) for k in keys.values() if k is not None)
    brief_patterns.save(vault, heads, newest + brief_patterns.RACY_NS, keys)
    saved = json.loads(facts(vault).read_text())["registry"]
    assert None in saved.values() and saved.keys() == keys.keys()
    assert brief_patterns.load(vault, 250) is None
    brief_patterns.save(vault, heads, newest + brief_patterns.RACY_NS + 1, keys)
    assert json.loads(facts(vault).read_text())["registry"] == keys
    assert brief_patterns.load(vault, 250) is not None


def test_blocks_the_scan_cache_kept_get_their_paragraph(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.scan import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # files just written are kept: no waiting
    monkeypatch.setattr(brief_patterns, "RACY_NS", 0)
    parsed: list[str] = []
    real = brief_patterns._parsed

    def counted(vault: Path, head: object, done: dict[str, dict[int, object]]) -> str:
        parsed.append(getattr(head, "name", ""))
        return real(vault, head, done)  # type: ignore[arg-type]

    monkeypatch.setattr(brief_patterns, "_parsed", counted)
    scan(vault)
    path = vault / "patterns" / "more.md"  # one file changes: the other comes from the cache
    path.write_text(path.read_text() + block("zeta", 7, 1, "Zeta is another."))
    scan(vault)
    assert brief_patterns.load(vault, 250) is not None
    assert brief(vault) == live(vault) and parsed == []  # by the fingerprints kept
    facts(vault).unlink()  # and without the last file to take them from: parsed
    scan(vault)
    assert sorted(parsed) == ["alpha", "beta", "delta", "gamma", "zeta"]  # all cache-kept
    assert brief_patterns.load(vault, 250) is not None
    assert brief(vault) == live(vault)


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        '{"format": 2}',
        '{"format": 1, "top": 250, "total": 1, "registry": {}, "patterns": []}',
        '{"format": 1, "top": "many"}',
        '{"format": 1, "top": 250, "total": 4, "registry": REG, "patterns": [[1, 2, 3]]}',
        '{"format": 1, "top": 250, "total": 4, "registry": REG, "patterns": "x"}',
        '{"format": 1, "top": 250, "total": 0, "registry": REG, "patterns": ROWS}',
        '{"format": 1, "top": 1, "total": 4, "registry": REG, "patterns": ROWS}',
    ],
)
def test_a_corrupt_or_foreign_file_is_ignored(vault: Path, body: str) -> None:
    scan(vault)
    good = json.loads(facts(vault).read_text())
    body = body.replace("REG", json.dumps(good["registry"]))
    facts(vault).write_text(body.replace("ROWS", json.dumps(good["patterns"])))
    assert brief_patterns.load(vault, 250) is None
    assert brief(vault) == live(vault)


def test_scan_as_of_saves_nothing(vault: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--as-of", str(TODAY)])
    assert result.exit_code in (0, 1) and not facts(vault).exists()


def test_saved_patterns_symlinked_out_of_the_vault_are_not_served(
    vault: Path, tmp_path: Path
) -> None:
    scan(vault)
    saved = json.loads(facts(vault).read_text())
    saved["patterns"][0][4] = "PLANTED outside the vault."
    outside = tmp_path / "planted.json"
    outside.write_text(json.dumps(saved))
    facts(vault).unlink()
    facts(vault).symlink_to(outside)
    assert brief_patterns.load(vault, 250) is None
    assert "PLANTED" not in brief(vault)
