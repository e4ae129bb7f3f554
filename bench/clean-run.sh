#!/bin/sh
# The benchmark as docs/benchmarks.md and the README quote it, in one command:
#
#   bench/clean-run.sh [bench/run.py options]
#
# A fresh virtual environment (removed afterwards), a plain `pip install '.[bench]'` of
# this checkout (not editable: an editable install's start-up hook slows every Python
# start and hides vaultkeeper's own imports), then bench/run.py with that interpreter,
# which writes docs/benchmarks.md and the README's Performance table, then bench/search.py,
# which adds the MCP search tool's section to docs/benchmarks.md.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$repo[bench]"
cd "$repo"
"$work/venv/bin/python" bench/run.py "$@"
"$work/venv/bin/python" bench/search.py
