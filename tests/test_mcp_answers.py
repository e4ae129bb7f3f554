"""The saved answers (vaultkeeper/mcp/answers.py): their key, their file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vaultkeeper.mcp import answers

pytest.importorskip("mcp")


def test_a_message_is_keyed_without_its_id() -> None:
    one = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"b": 1, "a": 2}}
    other = {"params": {"a": 2, "b": 1}, "method": "tools/list", "id": "x", "jsonrpc": "2.0"}
    assert answers.canonical(one) == answers.canonical(other)
    assert answers.canonical(one) != answers.canonical({**one, "params": {"a": 2}})


def test_the_installed_sdk_is_one_the_hand_over_is_tested_with() -> None:
    """A new SDK version serves without the front until relay.py is checked against it
    (these tests) and SDK_HANDED_OVER names it."""
    key = answers.fingerprint()
    assert key is not None and "mcp-2.3." in key and "pydantic-" in key


def test_no_key_when_the_sdk_cannot_be_imported() -> None:
    code = "import sys; sys.modules['mcp'] = None\nfrom vaultkeeper.mcp import answers\n"
    code += "print(answers.fingerprint())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "None", done.stderr


def test_saved_then_loaded_under_its_key_only(tmp_path: Path) -> None:
    file = tmp_path / "cache" / "vaultkeeper" / answers.FILE_NAME
    answers.save(file, "k1", {"a": {"x": 1}})
    answers.save(file, "k1", {"b": 2})
    assert answers.load(file, "k1") == {"a": {"x": 1}, "b": 2}
    assert answers.load(file, "k2") == {}
    answers.save(file, "k1", {"c": 3}, forget=True)
    assert answers.load(file, "k1") == {"c": 3}
    for n in range(6):
        answers.save(file, f"n{n}", {"n": n})
    kept = json.loads(file.read_text())["keys"]
    assert list(kept) == ["n2", "n3", "n4", "n5"]  # the newest few installs'


@pytest.mark.parametrize("text", ["not json", "[]", '{"format": 99, "keys": {}}', ""])
def test_a_damaged_file_is_no_answers(tmp_path: Path, text: str) -> None:
    file = tmp_path / answers.FILE_NAME
    file.write_text(text)
    assert answers.load(file, "k") == {}
    answers.save(file, "k", {"a": 1})
    assert answers.load(file, "k") == {"a": 1}


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"format": 1, "keys": {"k": {"a": 1}}}))
    (tmp_path / answers.FILE_NAME).symlink_to(elsewhere)
    assert answers.load(tmp_path / answers.FILE_NAME, "k") == {}


def test_the_file_is_under_the_cache_folder() -> None:
    assert answers.path({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path(
        "/c/vaultkeeper/mcp-answers.json"
    )
    assert answers.path({"HOME": "/h"}) == Path("/h/.cache/vaultkeeper/mcp-answers.json")
    assert answers.path({}) is None
    answers.save(None, "k", {})  # nowhere to save: nothing done
