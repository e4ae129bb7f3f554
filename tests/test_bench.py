"""The benchmark's generated vaults, and the scanner's fast paths checked on them.

scan.classify reads registry blocks lazily and most frontmatter without YAML; here it
must return exactly what the obvious classification (tests/reference.py: full blocks,
model.read_note with YAML) returns, on seeded vaults from bench/gen.py.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import pytest

from tests import reference
from tests.conftest import REPO, SAMPLE_VAULT
from vaultkeeper import config
from vaultkeeper.scan import classify as scan

sys.path.insert(0, str(REPO / "bench"))
from gen import generate  # noqa: E402

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gen") / "vault"
    generate(400, root, seed=11, anchor=NOW.date())
    # problems a hand-edited vault has, so the comparison covers them too
    memory = root / "projects" / "p000" / "memory"
    (memory / "bad-yaml.md").write_text("---\nname: [unclosed\nholdout_until: x\n---\nbody\n")
    (memory / "vague.md").write_text('---\nname: vague\nholdout_until: "yesterday"\n---\n')
    (memory / "latin.md").write_bytes(b"---\nname: x\n---\n\xe9\n")
    (memory / "no-frontmatter.md").write_text("# just notes\n")
    registry = root / config.REGISTRY_FILE
    registry.write_text(
        registry.read_text() + "\n### broken\n**success count:** lots\n**last used:** soon\n"
    )
    return root


def test_generation_is_seeded_and_shaped(tmp_path: Path, generated: Path) -> None:
    again = tmp_path / "again"
    generate(400, again, seed=11, anchor=NOW.date())
    files = sorted(p.relative_to(again) for p in again.glob("projects/*/*/*.md"))
    assert [(p, (again / p).read_bytes()) for p in files] == [
        (p, (generated / p).read_bytes()) for p in files
    ]
    registries = sorted((again / config.PATTERNS_DIR).glob("*.md"))
    assert len(registries) >= 3
    memory = list(again.glob("projects/*/memory/*.md"))
    research = list(again.glob("projects/*/research/*.md"))
    assert len(memory) + len(research) == 200 and len(memory) > len(research) > 0


def test_every_list_gets_candidates(generated: Path) -> None:
    report = scan.classify(generated, NOW)
    assert report.promote and report.prune and report.held_out and report.problems


def test_classify_equals_the_plain_reference_on_a_generated_vault(generated: Path) -> None:
    assert scan.classify(generated, NOW) == reference.classify(generated, NOW)


@pytest.mark.parametrize("days", [-400, -91, 0, 45, 400])
def test_and_on_other_days(generated: Path, days: int) -> None:
    now = NOW + dt.timedelta(days=days)
    assert scan.classify(generated, now) == reference.classify(generated, now)


def test_and_on_the_sample_vault(tmp_path: Path) -> None:
    vault = tmp_path / "sample"
    shutil.copytree(SAMPLE_VAULT, vault, ignore=shutil.ignore_patterns("state"))
    for days in (0, 200):
        now = NOW + dt.timedelta(days=days)
        assert scan.classify(vault, now) == reference.classify(vault, now)
