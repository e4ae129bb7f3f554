"""The scan's digests are hashlib's, whichever module computes them."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultkeeper.store import digests


@given(st.binary(max_size=4096))
def test_the_digests_are_hashlibs(data: bytes) -> None:
    assert digests.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    for size in (8, 16, 32):
        expected = hashlib.blake2b(data, digest_size=size).hexdigest()
        assert digests.blake2b_hex(data, size) == expected


def test_without_the_builtin_modules_hashlib_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    real = digests.importlib.import_module

    def refuse(name: str) -> object:
        if name in ("_sha2", "_sha256", "_blake2"):
            raise ImportError(name)
        return real(name)

    monkeypatch.setattr(digests.importlib, "import_module", refuse)
    monkeypatch.setattr(digests, "_made", {})
    assert digests.sha256_hex(b"x") == hashlib.sha256(b"x").hexdigest()
    assert digests.blake2b_hex(b"x", 8) == hashlib.blake2b(b"x", digest_size=8).hexdigest()
    assert digests._made["sha256"] is hashlib.sha256


def test_hashing_does_not_load_openssl() -> None:
    code = (
        "import sys; from vaultkeeper.store import digests; "
        "digests.sha256_hex(b'x'); digests.blake2b_hex(b'x', 8); "
        "print('_hashlib' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
