#!/bin/sh
# vaultkeeper-hook: recall
#
# A coding agent's UserPromptSubmit and PreToolUse hook (`vaultkeeper hooks install
# claude-code|codex --recall`): the few lessons of the vault that fit the request that
# just arrived, or the file a tool is about to touch, as the host's added context
# (`vaultkeeper --vault VAULT recall-hook HOST`, vaultkeeper/recall/moment.py). It reads
# the full-text index in state/vaultkeeper.db, never walks the vault.
#
#   recall.sh [VAULT [HOST [PROGRAM]]]
#
# VAULT defaults to $VAULTKEEPER_VAULT, HOST (claude-code or codex) to claude-code,
# PROGRAM (the vaultkeeper executable) to the one on PATH. Always exits 0; anything
# wrong prints nothing and leaves one line in state/hooks.log.
#
# Names repeated from vaultkeeper/config.py (a test keeps them in step):
#   ENV_VAULT=VAULTKEEPER_VAULT  STATE_DIR=state  HOOK_LOG_FILE=hooks.log

vault=${1:-${VAULTKEEPER_VAULT:-}}
host=${2:-claude-code}
prog=${3:-}

# the vault's hook log, if it may be appended to: no symlink (it may lead out of the
# vault) and nothing but a regular file (`>>` on a FIFO nobody reads never returns)
plain_log() {
    [ ! -L "$1" ] && { [ ! -e "$1" ] || [ -f "$1" ]; }
}

log() {
    stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
    if [ -n "$vault" ] && [ -d "$vault" ] && [ ! -L "$vault/state" ] && plain_log "$vault/state/hooks.log" && mkdir -p "$vault/state" 2>/dev/null; then
        printf '%s recall: %s\n' "$stamp" "$*" >>"$vault/state/hooks.log" 2>/dev/null
    elif [ -n "${HOME:-}" ]; then
        dir=${XDG_STATE_HOME:-$HOME/.local/state}/vaultkeeper
        mkdir -p "$dir" 2>/dev/null &&
            printf '%s recall: %s\n' "$stamp" "$*" >>"$dir/hooks.log" 2>/dev/null
    fi
}

case $prog in
*/*) ;;
*) prog=$(command -v "${prog:-vaultkeeper}" 2>/dev/null) ;;
esac
if [ -z "$prog" ] || [ ! -x "$prog" ]; then
    log "vaultkeeper not found (PATH=$PATH); reinstall the hook with: vaultkeeper hooks install claude-code|codex --recall"
    exit 0
fi
# The fast way, when PROGRAM is a Python console script and this script sits in the
# installed package (vaultkeeper/_data/hooks/) or beside it (a source checkout): its
# interpreter with -S (no site: no .pth files read) and only the package's folder on
# sys.path; the recall imports nothing outside the standard library.
here=${0%/*}
root=
if [ -f "$here/../../recall/moment.py" ]; then
    root=$here/../../..
elif [ -f "$here/../vaultkeeper/recall/moment.py" ]; then
    root=$here/..
fi
py=
if [ -n "$root" ] && IFS= read -r first <"$prog" 2>/dev/null; then
    case $first in
    '#!'/*python*) py=${first#??} ;;
    esac
    case $py in
    *' '* | *'	'*) py= ;; # an interpreter with arguments (env python3): the slow way
    esac
fi
# `exec`: the interpreter takes this shell's place, so when the host kills the hook (its
# timeout) it kills the program itself, never leaving it running. The program logs its
# own failures in state/hooks.log.
if [ -n "$py" ] && [ -x "$py" ]; then
    exec "$py" -S -c 'import sys,gc;gc.disable();sys.path[0]=sys.argv[1]
from vaultkeeper.recall.moment import main;sys.exit(main(sys.argv[2] or None,sys.argv[3]))' \
        "$root" "$vault" "$host" 2>/dev/null
fi
exec "$prog" --vault "$vault" recall-hook "$host" 2>/dev/null
