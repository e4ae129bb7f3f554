"""Outcomes: exit codes, journal record shape, a batch's overall exit code."""

from __future__ import annotations

from vaultkeeper.apply.decision import Decision, Outcome, outcome_for, worst_exit


def test_exit_codes() -> None:
    codes = {o: Outcome("skip", "t", o, "r").exit_code for o in ("act", "silence", "defer", "ask")}
    assert codes == {"act": 0, "silence": 0, "defer": 1, "ask": 3}


def test_record_keeps_only_what_applies() -> None:
    bare = Outcome("skip", "t", "silence", "because")
    assert bare.record() == {
        "action": "skip",
        "target": "t",
        "outcome": "silence",
        "reason": "because",
    }
    full = outcome_for(
        Decision("revalidate", "m.md", "https://x.org", "pass"), "act", "ok",
        id="i", hash_before="a", hash_after="b", extra={"to": "active", "none": None},
    )  # fmt: skip
    assert full.record() == {
        "action": "revalidate", "target": "m.md", "outcome": "act", "reason": "ok",
        "evidence": "https://x.org", "id": "i", "hash_before": "a", "hash_after": "b",
        "to": "active", "result": "pass",
    }  # fmt: skip
    dry = Outcome("skip", "t", "act", "r", diff="d", dry_run=True).to_dict()
    assert (dry["dry_run"], dry["diff"], dry["exit_code"]) == (True, "d", 0)


def test_worst_exit() -> None:
    def of(*names: str) -> list[Outcome]:
        return [Outcome("skip", "t", n, "r") for n in names]

    assert worst_exit(of()) == 0
    assert worst_exit(of("act", "silence")) == 0
    assert worst_exit(of("act", "defer")) == 1
    assert worst_exit(of("defer", "ask", "act")) == 3
