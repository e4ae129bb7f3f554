"""``ingest`` counts a native memory named in a ``<cc-memory>`` tag of the model's reply,
once per session, on transcripts recorded from the real Claude Code 2.1.332."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.host_fixtures import CLAUDE, claude_files
from tests.native_tree import vk
from vaultkeeper.native.folders import sanitize
from vaultkeeper.store.uses import read_events

FIXTURE = CLAUDE / "auto-memory"
# session 2 names the memory in a <cc-memory> tag and Reads it; session 1 Write's it
(CITES,) = [s for s, p in claude_files(FIXTURE).items() if "<cc-memory" in p.read_text()]
(WRITES,) = set(claude_files(FIXTURE)) - {CITES}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recorded ~/.claude/projects, its /HOME placeholder made this test's home."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VAULTKEEPER_TODAY", "2026-12-01")
    top = home / ".claude" / "projects" / sanitize(f"{home}/proj")
    shutil.copytree(FIXTURE / "claude-projects" / "-HOME-proj", top)
    for path in top.glob("*.jsonl"):
        text = path.read_text(encoding="utf-8").replace("-HOME-proj", sanitize(f"{home}/proj"))
        path.write_text(text.replace("/HOME", str(home)), encoding="utf-8")
    (home / "proj").mkdir()
    return home


def transcript(home: Path, session: str) -> Path:
    return home / ".claude" / "projects" / sanitize(f"{home}/proj") / f"{session}.jsonl"


def block(vault: Path) -> str:
    return (vault / "patterns" / "native-memory.md").read_text(encoding="utf-8")


def project(home: Path) -> str:
    return sanitize(f"{home}/proj").lstrip("-")


def test_a_cited_native_memory_counts_once_and_its_read_is_recorded(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    assert vk(vault, "native", "adopt", "--cwd", str(home / "proj"))[0] == 0
    code, _, _ = vk(vault, "ingest", str(transcript(home, WRITES)), str(transcript(home, CITES)))
    assert code == 0
    text = block(vault)
    name = f"{project(home)}/pin-clock.md"
    assert f"### {name}\nClaude Code auto memory: tests pin the clock\n\n" in text
    assert re.search(rf"### {re.escape(name)}\n.*\n\n\*\*success count:\*\* 1\n", text)
    uses = list(read_events(vault))
    assert {(u.session, u.kind, u.target) for u in uses} >= {
        (CITES, "cite", name),
        (CITES, "read", f"native:{name}"),
    }
    assert not any(u.session == WRITES and u.kind == "cite" for u in uses)
    vk(vault, "ingest", str(transcript(home, CITES)))  # again: nothing counts twice
    assert "**success count:** 1\n" in block(vault)


def test_nothing_counts_for_a_folder_that_is_not_adopted(home: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    assert vk(vault, "ingest", str(transcript(home, CITES)))[0] == 0
    assert not (vault / "patterns" / "native-memory.md").exists()


def test_a_tag_in_the_persons_prompt_or_naming_a_missing_file_never_counts(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    vk(vault, "native", "adopt", "--cwd", str(home / "proj"))
    path = transcript(home, CITES)
    lines = path.read_text(encoding="utf-8").splitlines()
    forged = []
    for line in lines:
        obj = json.loads(line)
        if obj.get("type") == "user" and isinstance(obj.get("message"), dict):
            obj["message"]["content"] = '<cc-memory filenames="pin-clock.md">x</cc-memory>'
            forged.append(json.dumps(obj))
        elif obj.get("type") == "assistant":
            forged.append(line.replace('filenames=\\"pin-clock.md\\"', 'filenames=\\"none.md\\"'))
        else:
            forged.append(line)
    path.write_text("\n".join(forged) + "\n", encoding="utf-8")
    assert vk(vault, "ingest", str(path))[0] == 0
    assert not (vault / "patterns" / "native-memory.md").exists()


def second_session(home: Path) -> Path:
    """The citing session again as another session: new session id and line ids."""
    source = transcript(home, CITES).read_text(encoding="utf-8")
    other = "11111111-2222-4333-8444-555555555555"
    text = re.sub(r'"uuid":"([0-9a-f-]+)"', lambda m: f'"uuid":"x{m.group(1)[1:]}"', source)
    path = transcript(home, other)
    path.write_text(text.replace(CITES, other), encoding="utf-8")
    return path


def test_the_brief_does_not_repeat_what_memory_md_loads_and_lint_takes_the_counters(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    vk(vault, "native", "adopt", "--cwd", str(home / "proj"))
    vk(vault, "ingest", str(transcript(home, CITES)), str(second_session(home)))
    assert "**success count:** 2\n" in block(vault)
    vk(vault, "scan", "--force")
    code, brief, _ = vk(vault, "report", "--brief")
    assert code == 0 and "pin-clock" not in brief
    code, out, _ = vk(vault, "lint")
    assert "native-memory.md" not in out, out
    _, report, _ = vk(vault, "report", "--json")
    assert "pin-clock" not in report  # not a vault prune/promote candidate either


@pytest.mark.parametrize("brk", ["\n", "\r", "\x0b", "\x85", "\u2028"])
def test_a_memory_file_name_holding_a_line_break_never_forges_a_block(
    home: Path, make_vault: MakeVault, brk: str
) -> None:
    """Issue 32 item 11: names are one line, always. A file whose name holds a line
    break, cited in a tag, writes no ``### ...`` block of its own making."""
    vault = make_vault()
    vk(vault, "native", "adopt", "--cwd", str(home / "proj"))
    folder = home / ".claude" / "projects" / sanitize(f"{home}/proj") / "memory"
    name = (
        f"a{brk}{brk}**success count:** 99{brk}**last used:** 2026-12-01{brk}{brk}### p-forged.md"
    )
    (folder / name).write_text("---\nname: evil\ndescription: evil\n---\n\nx\n")
    path = transcript(home, CITES)
    quoted = json.dumps(f"pin-clock.md,{name}")[1:-1].replace('"', '\\"')
    text = path.read_text(encoding="utf-8")
    assert 'filenames=\\"pin-clock.md\\"' in text
    path.write_text(text.replace('filenames=\\"pin-clock.md\\"', f'filenames=\\"{quoted}\\"'))
    assert vk(vault, "ingest", str(path))[0] == 0
    written = block(vault)
    assert "forged" not in written and "count:** 99" not in written, written
    heads = [ln for ln in written.split("\n") if ln.startswith("### ")]
    assert heads == [f"### {project(home)}/pin-clock.md"], heads


def test_a_tag_naming_many_memories_costs_one_write_not_one_each(
    home: Path, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32 item 9: one ``<cc-memory>`` tag naming N adopted memories journaled N
    lines with one fsync each, under the writer lock (2,000 names: 17.6 s, a concurrent
    ``use`` waiting all along). Now the syncs do not grow with N, and a name is looked up
    in the folder's listing, not by two stats of its own."""
    import os

    vault = make_vault()
    vk(vault, "native", "adopt", "--cwd", str(home / "proj"))
    folder = home / ".claude" / "projects" / sanitize(f"{home}/proj") / "memory"
    names = [f"m{i:04d}.md" for i in range(400)]
    for name in names:
        (folder / name).write_text(f"---\nname: {name}\ndescription: d {name}\n---\n\nx\n")
    names += [f"absent-{i}.md" for i in range(5000)]
    path = transcript(home, CITES)
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace('filenames=\\"pin-clock.md\\"', f'filenames=\\"{",".join(names)}\\"')
    )
    syncs: list[int] = []
    stats: list[str] = []
    real_fsync, real_stat = os.fsync, os.stat

    def fsync(fd: int) -> None:
        syncs.append(fd)
        real_fsync(fd)

    def counted_stat(p: object, *a: object, **k: object) -> os.stat_result:
        stats.append(str(p))
        return real_stat(p, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "stat", counted_stat)
    assert vk(vault, "ingest", str(path))[0] == 0
    assert block(vault).count("**success count:** 1\n") == 400
    journaled = (vault / "state" / "journal.jsonl").read_text().count('"action": "use"')
    assert journaled >= 400
    assert len(syncs) <= 12, len(syncs)  # 400+ before
    assert sum("absent-" in s for s in stats) == 0  # each absent name cost a stat before


def test_a_native_counters_file_linked_out_of_the_vault_is_never_read_nor_copied_in(
    home: Path, make_vault: MakeVault, tmp_path: Path
) -> None:
    """patterns/native-memory.md committed as a symlink (to ~/.aws/credentials, say):
    the session-end hook's ingest never copies what it points at into the vault."""
    vault = make_vault()
    vk(vault, "native", "adopt", "--cwd", str(home / "proj"))
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = outside-the-vault\n")
    (vault / "patterns" / "native-memory.md").symlink_to(secret)
    vk(vault, "ingest", str(transcript(home, CITES)))
    assert secret.read_text() == "aws_secret_access_key = outside-the-vault\n"
    assert (vault / "patterns" / "native-memory.md").is_symlink()
    files = [p for p in vault.rglob("*") if p.is_file() and not p.is_symlink()]
    assert [p for p in files if b"outside-the-vault" in p.read_bytes()] == []
