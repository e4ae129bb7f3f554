"""Transcript lines that are hostile in their details: each test failed before."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault
from tests.test_learn_ingest import REGISTRY, counters
from vaultkeeper.learn.ingest import ingest

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def test_a_timestamp_past_the_last_utc_day_is_that_line_s_problem_only(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    """9999-12-31T23:59:59-23:59 overflows in UTC: it used to abort the whole batch."""
    vault = make_vault({"patterns/registry.md": REGISTRY})
    bad = tf.write(
        tmp_path / "a.jsonl",
        [
            tf.claude(
                "assistant",
                [tf.text("[[patterns/registry#pin-test-clock]]")],
                ts="9999-12-31T23:59:59-23:59",
            )
        ],
    )
    good = tf.write(
        tmp_path / "b.jsonl",
        [
            tf.claude(
                "assistant", [tf.text("[[patterns/registry#grep-the-config-value]]")], session="s2"
            )
        ],
    )
    out = ingest(vault, [bad, good], NOW)
    assert out.ok
    assert sorted(c.name for c in out.result.counted) == ["grep-the-config-value", "pin-test-clock"]
    assert counters(vault, "pin-test-clock") == ("3", "2026-12-01")  # no date: the day it is read


def test_names_one_link_target_apart_are_counted_apart(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    """`a:b`, `a b`, `a^b`, `a%b` used to share one key: all citations counted for `a:b`."""
    from vaultkeeper.lint.run import lint_vault

    names = ["a:b", "a b", "a^b", "a%b"]
    block = "### {}\nBody {}.\n\n**success count:** 0\n**last used:** 2026-01-01\n\n"
    registry = "# Pattern registry\n\n" + "".join(block.format(n, i) for i, n in enumerate(names))
    vault = make_vault({"patterns/registry.md": registry})
    for i, name in enumerate(names[1:]):
        link = tf.text(f"[[patterns/registry#{name}]]")
        tf.write(tmp_path / f"s{i}.jsonl", [tf.claude("assistant", [link], session=f"s{i}")])
    out = ingest(vault, sorted(tmp_path.glob("s*.jsonl")), NOW)
    assert sorted(c.name for c in out.result.counted) == ["a b", "a%b", "a^b"]
    assert counters(vault, "a:b")[0] == "0"
    found = [(f.line, f.code) for f in lint_vault(vault, select=["VK402"]).findings]
    assert found == [(9, "VK402"), (15, "VK402"), (21, "VK402")]


def test_many_unknown_names_in_one_line_are_bounded_work(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    """40,000 distinct unknown names in one line took 46 s under the writer lock (each was
    compared with every earlier one); now a text yields at most TRANSCRIPT_MAX_LINKS
    links and at most INGEST_MAX_UNKNOWN are reported by name."""
    from vaultkeeper import config

    vault = make_vault({"patterns/registry.md": REGISTRY})
    names = " ".join(f"[[patterns/registry#unknown-{i}]]" for i in range(40_000))
    path = tf.write(tmp_path / "many.jsonl", [tf.claude("assistant", [tf.text(names)])])
    out = ingest(vault, [path], NOW).result
    assert [e.target for e in out.unknown] == [
        f"unknown-{i}" for i in range(config.INGEST_MAX_UNKNOWN)
    ]
    assert out.unknown_more == config.TRANSCRIPT_MAX_LINKS - config.INGEST_MAX_UNKNOWN


def _cite_line(session: str | None) -> str:
    line = tf.claude("assistant", [tf.text("[[patterns/registry#pin-test-clock]]")])
    if session is None:
        data = json.loads(line)
        del data["sessionId"]
        return json.dumps(data)
    return line.replace(tf.SESSION, session)


def test_one_transcript_file_is_one_session_whatever_ids_it_claims(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    """20,000 forged session ids in one file added 20,000; a first line without an id
    made the file two sessions (its name, then the id)."""
    vault = make_vault({"patterns/registry.md": REGISTRY})
    forged = tf.write(tmp_path / "forged.jsonl", [_cite_line(f"id-{i}") for i in range(20_000)])
    ingest(vault, [forged], NOW)
    assert counters(vault, "pin-test-clock")[0] == "3"
    late = tf.write(tmp_path / "late.jsonl", [_cite_line(None), _cite_line("the-id")])
    out = ingest(vault, [late], NOW)
    assert [f.session for f in out.files] == ["the-id"]
    assert counters(vault, "pin-test-clock")[0] == "4"


def test_a_transcript_without_a_session_id_is_one_session_wherever_it_is_copied(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    first = tf.write(tmp_path / "a" / "x.jsonl", [_cite_line(None)])
    ingest(vault, [first], NOW)
    copy = tmp_path / "b" / "renamed.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes() + (_cite_line(None) + "\n").encode())  # and longer
    out = ingest(vault, [copy], NOW)
    assert out.files[0].session.startswith("file-sha256:")
    assert counters(vault, "pin-test-clock")[0] == "3"


def test_a_huge_sparse_transcript_is_refused_before_it_is_read(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    from vaultkeeper import config

    vault = make_vault({"patterns/registry.md": REGISTRY})
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.write((_cite_line("s") + "\n").encode())
        fh.truncate(10 * 1024**3)  # 10 GB, sparse: nothing is written
    out = ingest(vault, [path], NOW)
    assert out.files[0].error == (
        f"{10 * 1024**3} bytes, over the {config.TRANSCRIPT_MAX_BYTES} a transcript may have"
    )
    assert counters(vault, "pin-test-clock")[0] == "2"


def test_a_lone_surrogate_in_a_session_id_is_printed_escaped(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    """A strict UTF-8 stdout raised UnicodeEncodeError (an internal error); C.UTF-8
    wrote the raw byte 0xff."""
    import os
    import subprocess
    import sys

    vault = make_vault({"patterns/registry.md": REGISTRY})
    line = _cite_line("ab\udcffcd")  # JSON writes it as the escape \\udcff
    path = tmp_path / "s.jsonl"
    path.write_text(line + "\n", encoding="utf-8", errors="surrogatepass")
    for args in (["ingest", str(path)], ["log"]):
        done = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), *args],
            capture_output=True,
            env={**os.environ, "PYTHONIOENCODING": "utf-8", "VAULTKEEPER_TODAY": "2026-12-01"},
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, b""), done.stderr
        assert b"session ab\\udcffcd" in done.stdout
