#!/usr/bin/env python3
"""A hook that writes the payload it gets on stdin to a file, byte for byte.

    dump_hook.py EVENT [--context TEXT]

The file is ``$HOME/.vkhooks/out/<ns-clock>-<EVENT>.json`` (the recorder runs every host
in a throw-away HOME). With ``--context TEXT`` it also prints
``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}`` on stdout,
the shape Claude Code (and Codex) read additional model context from. Exit 0 always.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    event = sys.argv[1] if len(sys.argv) > 1 else "unknown"
    data = sys.stdin.buffer.read()
    out = Path(os.environ.get("HOME", "/tmp")) / ".vkhooks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{time.time_ns()}-{event}.json").write_bytes(data)
    if "--context" in sys.argv:
        text = sys.argv[sys.argv.index("--context") + 1]
        print(
            json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
