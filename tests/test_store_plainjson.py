"""plainjson.loads gives exactly json.loads, or declines (NOT_PLAIN) and json decides.

The throttled scan reads the state file with it instead of importing json; a wrong
answer would throttle a scan that should run (or the reverse), so every input here is
checked against json.loads itself.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper.scan import statefile as state
from vaultkeeper.store.plainjson import NOT_PLAIN, loads

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
# what plainjson must read itself (else the no-op would import json after all)
PLAIN_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters='"\\')
)
PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**17), 10**17) | PLAIN_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(PLAIN_TEXT, inner, max_size=4),
    max_leaves=20,
)
LAYOUTS = st.sampled_from(
    [{}, {"indent": 2}, {"indent": 0}, {"indent": "\t"}, {"separators": (",", ":")}]
)


def agrees(raw: bytes) -> None:
    """loads(raw) is json.loads(raw), or NOT_PLAIN; never a different answer."""
    got = loads(raw)
    if got is NOT_PLAIN:
        return
    expected = json.loads(raw)  # plain text is valid JSON: this must not raise
    assert got == expected and repr(got) == repr(expected), raw


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS, LAYOUTS)
def test_dumped_documents_read_the_same(doc: Any, layout: dict[str, Any]) -> None:
    agrees(json.dumps(doc, **layout).encode())
    agrees(json.dumps(doc, ensure_ascii=False, **layout).encode())


@settings(max_examples=300, deadline=None)
@given(PLAIN, LAYOUTS)
def test_plain_documents_are_read_without_json(doc: Any, layout: dict[str, Any]) -> None:
    raw = json.dumps(doc, **layout).encode()
    assert loads(raw) == doc and loads(raw) == json.loads(raw)


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS, st.data())
def test_mangled_documents_never_read_differently(doc: Any, data: st.DataObject) -> None:
    text = json.dumps(doc, indent=2)
    at = data.draw(st.integers(0, len(text)))
    cut = data.draw(st.integers(0, 3))
    bit = data.draw(
        st.sampled_from(['"', "\\", ",", ":", "{", "}", "[", "]", "0", "-", "e", " ", "\x01", ""])
    )
    agrees((text[:at] + bit + text[at + cut :]).encode())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_any_bytes_never_read_differently(raw: bytes) -> None:
    agrees(raw)


def test_what_write_state_writes_is_plain() -> None:
    data = state.default_state()
    data["perTask"] = {"selfMaintain": {"prune": 3, "promote": 0, "heldOut": 1, "durationMs": 272}}
    data.update(lastCompleted=1796084810360, pid=None)
    raw = (json.dumps(data, indent=2) + "\n").encode()
    assert loads(raw) == data


@pytest.mark.parametrize(
    "raw",
    [
        b"1.5", b"1e3", b"-", b"01", b"NaN", b"-Infinity", b'"a\\"b"', b'"\\u00e9"',
        b'"tab\there"', "\"caf\u00e9\"".encode(), b"\xef\xbb\xbf{}", b"[1,]", b'{"a":1,}',
        b'{"a" 1}', b"nul", b"[" * 40 + b"]" * 40, b"1" * 19, b"{} {}", b"",
    ],
)  # fmt: skip
def test_what_it_leaves_to_json(raw: bytes) -> None:
    assert loads(raw) is NOT_PLAIN


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (b' {"a": 1, "a": 2} ', {"a": 2}),  # json keeps the last
        (b"-0", 0),
        (b'[true, false, null, -12, "x y"]', [True, False, None, -12, "x y"]),
        (b"\r\n\t{}\n", {}),
        (b"9" * 18, int("9" * 18)),
    ],
)
def test_plain_forms(raw: bytes, value: Any) -> None:
    assert loads(raw) == value == json.loads(raw)
