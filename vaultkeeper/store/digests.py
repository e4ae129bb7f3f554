"""SHA-256 and BLAKE2b for the scan, without loading OpenSSL when it can be helped.

``import hashlib`` loads OpenSSL's libcrypto: about 3 ms, paid by every scan that hashes
anything (a session-end scan always does: the lesson it wrote, the registry blocks it
moved). CPython's own builtin modules compute the same digests and load in a tenth of
that; a build without them (some FIPS-minded distributions remove them) gets hashlib's.
The digests are the same bytes either way (tests/test_store_digests.py).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _builtin(names: tuple[str, ...], attr: str) -> Callable[..., Any]:
    for name in names:
        try:
            return getattr(importlib.import_module(name), attr)  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    import hashlib

    return getattr(hashlib, attr)  # type: ignore[no-any-return]


_made: dict[str, Callable[..., Any]] = {}


def sha256_hex(data: bytes) -> str:
    """hashlib.sha256(data).hexdigest()."""
    make = _made.get("sha256")
    if make is None:  # _sha2 from Python 3.12, _sha256 before
        make = _made["sha256"] = _builtin(("_sha2", "_sha256"), "sha256")
    return str(make(data).hexdigest())


def blake2b_hex(data: bytes, size: int) -> str:
    """hashlib.blake2b(data, digest_size=size).hexdigest()."""
    make = _made.get("blake2b")
    if make is None:
        make = _made["blake2b"] = _builtin(("_blake2",), "blake2b")
    return str(make(data, digest_size=size).hexdigest())


def blake2b_maker() -> Callable[..., Any]:
    """hashlib.blake2b itself (or the builtin one), for a caller hashing many small texts."""
    make = _made.get("blake2b")
    if make is None:
        make = _made["blake2b"] = _builtin(("_blake2",), "blake2b")
    return make
