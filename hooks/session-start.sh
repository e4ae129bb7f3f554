#!/bin/sh
# vaultkeeper-hook: session-start
#
# A coding agent's SessionStart hook: print the vault's recall -- how to use it, the
# lessons of the session's project, the most-used patterns, and the last scan's
# maintenance candidates (`vaultkeeper report --brief --cwd DIR`). The host adds a
# SessionStart hook's plain stdout to the model's context, which is how what the
# vault knows reaches the next session. `vaultkeeper start-hook` reads the JSON the
# host sends on stdin (its `cwd` is the session's folder; read up to the JSON's end,
# as a host may keep stdin open), prints that brief, then starts, detached and
# bounded, an ingest of the project's transcripts whose end hook never ran. One
# Python process: what a session's start waits for.
#
#   session-start.sh [VAULT [PROGRAM]]
#
# VAULT defaults to $VAULTKEEPER_VAULT; PROGRAM (the vaultkeeper executable) to the
# one on PATH. Prints never more than 10000 characters (past that the host would
# show a file path instead), and always exits 0; a failure leaves one line in
# state/hooks.log.
#
# Names repeated from vaultkeeper/config.py (a test keeps them in step):
#   ENV_VAULT=VAULTKEEPER_VAULT  STATE_DIR=state  HOOK_LOG_FILE=hooks.log
#   BRIEF_MAX_CHARS=10000

vault=${1:-${VAULTKEEPER_VAULT:-}}
prog=${2:-}
max=10000

# the vault's hook log, if it may be appended to: no symlink (it may lead out of the
# vault) and nothing but a regular file (`>>` on a FIFO nobody reads never returns)
plain_log() {
    [ ! -L "$1" ] && { [ ! -e "$1" ] || [ -f "$1" ]; }
}

log() {
    stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
    # a state/ that is a symlink may lead out of the vault: never write through it
    if [ -n "$vault" ] && [ -d "$vault" ] && [ ! -L "$vault/state" ] && plain_log "$vault/state/hooks.log" && mkdir -p "$vault/state" 2>/dev/null; then
        printf '%s session-start: %s\n' "$stamp" "$*" >>"$vault/state/hooks.log" 2>/dev/null
    elif [ -n "${HOME:-}" ]; then
        dir=${XDG_STATE_HOME:-$HOME/.local/state}/vaultkeeper
        mkdir -p "$dir" 2>/dev/null &&
            printf '%s session-start: %s\n' "$stamp" "$*" >>"$dir/hooks.log" 2>/dev/null
    fi
    printf 'vaultkeeper session-start: %s\n' "$*" >&2
}


brief() {
    if [ -z "$vault" ]; then
        log "no vault: pass it as the first argument or set VAULTKEEPER_VAULT"
        return
    fi
    if [ ! -d "$vault" ]; then
        log "$vault: no such vault directory"
        return
    fi
    case $prog in
    */*) ;;
    *) prog=$(command -v "${prog:-vaultkeeper}" 2>/dev/null) ;;
    esac
    if [ -z "$prog" ] || [ ! -x "$prog" ]; then
        log "vaultkeeper not found (PATH=$PATH); reinstall the hook with: vaultkeeper hooks install claude-code|codex"
        return
    fi
    if [ -t 0 ]; then
        set -- report --brief
    else
        set -- start-hook # reads the host's JSON on our stdin, then starts the catch-up
    fi
    if ! out=$("$prog" --vault "$vault" "$@" 2>/dev/null); then
        # an older vaultkeeper knows no start-hook: its brief, for no folder, is still one
        if [ "$1" != start-hook ] || ! out=$("$prog" --vault "$vault" report --brief </dev/null 2>/dev/null); then
            log "\`vaultkeeper --vault $vault report --brief\` failed; run it by hand to see why"
            return
        fi
        log "\`vaultkeeper --vault $vault start-hook\` failed; the brief was given without the session's folder"
    fi
    [ -n "$out" ] || return 0
    if [ "${#out}" -le "$max" ]; then
        printf '%s\n' "$out"
        return
    fi
    # Whole lines only, with room left for the closing note.
    printf '%s\n' "$out" | awk -v max="$((max - 200))" '
        { n += length($0) + 1; if (n > max) exit; print }'
    printf '%s\n' "(brief cut at $max characters: run \`vaultkeeper report\` for all of it)"
}

brief
exit 0
