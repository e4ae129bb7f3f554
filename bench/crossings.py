"""How many of vaultkeeper's files one ``vaultkeeper scan --force`` passes through.

    python bench/crossings.py VAULT      # prints: files passed through, returns

A profile hook sees every call of a function (module bodies, run once at import, are
left out); the files of the vaultkeeper package those calls enter, in order, give the
run's way through the code, as a reader following it from call to call would go.
"Returns" counts each call that enters a file the way had already left: that many
times the reader turns back to a file already read. The command runs in-process, as
the console script would run it.
"""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import Any


def trace(argv: list[str]) -> list[str]:
    import vaultkeeper

    root = os.path.dirname(vaultkeeper.__file__) + os.sep
    way: list[str] = []

    def importing(frame: FrameType | None) -> bool:
        while frame is not None:
            code = frame.f_code
            if code.co_name == "<module>" and code.co_filename.startswith(root):
                return True
            frame = frame.f_back
        return False

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or importing(frame):
            return
        name = frame.f_code.co_filename
        if name.startswith(root) and (not way or way[-1] != name):
            way.append(name)

    from vaultkeeper.entry import main

    sys.argv = ["vaultkeeper", *argv]
    sys.setprofile(hook)
    try:
        main()
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
    return [p[len(root) :] for p in way]


def crossings(way: list[str]) -> tuple[int, int]:
    seen: set[str] = set()
    returns = 0
    for name in way:
        returns += name in seen
        seen.add(name)
    return len(seen), returns


if __name__ == "__main__":
    files, returns = crossings(trace(["--vault", sys.argv[1], "scan", "--force"]))
    print(f"files {files} returns {returns}", file=sys.stderr)
