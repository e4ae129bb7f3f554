"""Links to a merged-away entry follow it to KEEP, in notes whose frontmatter is unparseable too."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import snapshot

from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.index.build import build_index

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
KEEP = "### keep\nInject now.\n\n**success count:** 2\n**last used:** 2026-10-03\n"
DROP = "### drop\nPin the clock.\n\n**success count:** 1\n**last used:** 2026-11-18\n"
BROKEN = {
    "bad yaml": (
        "---\nname: [unclosed\nrelated: [[patterns/registry#drop]]\n---\n"
        "see [[patterns/registry#drop]]\n"
    ),
    "never closed": "---\nname: n\nsee [[patterns/registry#drop|the pattern]]\n",
    "a list, not a mapping": "---\n- a\n- b\n---\nbody [[patterns/registry#drop]] here\n",
}


@pytest.mark.parametrize("form", BROKEN, ids=list(BROKEN))
def test_links_in_a_note_with_unparseable_frontmatter_are_rewritten(make_vault, form: str) -> None:
    text = BROKEN[form]
    vault = make_vault(
        {"patterns/registry.md": "# R\n\n" + KEEP + "\n" + DROP, "projects/p/research/n.md": text}
    )
    build_index(vault)
    before = snapshot(vault)
    decision = Decision("merge", "keep", "https://x.org/1", drop="drop")
    done = apply_decision(vault, decision, NOW, confirm=lambda plan: True)
    assert done.outcome == "act", done.reason
    after = (vault / "projects/p/research/n.md").read_text()
    assert after == text.replace("registry#drop", "registry#keep")
    assert apply_decision(vault, Decision("restore", str(done.id)), NOW).outcome == "act"
    assert snapshot(vault) == before
