#!/bin/sh
# vaultkeeper-hook: session-start
#
# A coding agent's SessionStart hook: print the vault's recall -- how to use it, the
# lessons of the session's project, the most-used patterns, and the last scan's
# maintenance candidates (`vaultkeeper report --brief --cwd DIR`). The host adds a
# SessionStart hook's plain stdout to the model's context, which is how what the
# vault knows reaches the next session. The session's folder comes from the `cwd`
# of the JSON the host sends on stdin.
#
#   session-start.sh [VAULT [PROGRAM]]
#
# VAULT defaults to $VAULTKEEPER_VAULT; PROGRAM (the vaultkeeper executable) to the
# one on PATH. Prints never more than 10000 characters (past that the host would
# show a file path instead), and always exits 0; a failure leaves one line in
# state/hook.log.
#
# Names repeated from vaultkeeper/config.py (a test keeps them in step):
#   ENV_VAULT=VAULTKEEPER_VAULT  STATE_DIR=state  HOOK_LOG_FILE=hook.log
#   BRIEF_MAX_CHARS=10000

vault=${1:-${VAULTKEEPER_VAULT:-}}
prog=${2:-}
max=10000

log() {
    stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
    # a state/ that is a symlink may lead out of the vault: never write through it
    if [ -n "$vault" ] && [ -d "$vault" ] && [ ! -L "$vault/state" ] && [ ! -L "$vault/state/hook.log" ] && mkdir -p "$vault/state" 2>/dev/null; then
        printf '%s session-start: %s\n' "$stamp" "$*" >>"$vault/state/hook.log" 2>/dev/null
    elif [ -n "${HOME:-}" ]; then
        dir=${XDG_STATE_HOME:-$HOME/.local/state}/vaultkeeper
        mkdir -p "$dir" 2>/dev/null &&
            printf '%s session-start: %s\n' "$stamp" "$*" >>"$dir/hook.log" 2>/dev/null
    fi
    printf 'vaultkeeper session-start: %s\n' "$*" >&2
}

# The Python for the small helpers below: the one vaultkeeper itself runs on (its
# console script's #! line), not the first python3 on PATH, which may be missing from
# a host's PATH, or a version manager's shim that costs a quarter of a second a call.
python_of() {
    py=
    first=
    [ -n "$1" ] && [ -r "$1" ] && IFS= read -r first <"$1"
    case $first in
    '#!'/*python*) py=${first#??} ;;
    esac
    case $py in
    *' '* | *'	'*) py= ;; # an interpreter with arguments (env python3): not run directly
    esac
    if [ -z "$py" ] || [ ! -x "$py" ]; then
        py=$(command -v python3 2>/dev/null || command -v python 2>/dev/null)
    fi
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
    if [ -n "$cwd" ]; then
        set -- --cwd "$cwd"
    else
        set --
    fi
    if ! out=$("$prog" --vault "$vault" report --brief "$@" 2>/dev/null); then
        log "\`vaultkeeper --vault $vault report --brief\` failed; run it by hand to see why"
        return
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

# The session's JSON: its "cwd" names the project whose lessons come first. A host
# may keep stdin open after writing it, so the read stops at the first complete JSON
# object (or after 2 s, or at 1 MB), never waiting for the end of input. A value that
# is not a string (or holds a NUL) is left out.
#
# Then, given PROG and VAULT, sessions whose end hook never ran (a host cancels or kills
# it): this session's start ingests its project's transcripts that no ingest read as
# they are now (`ingest --missed-beside`). Detached (its own session, every descriptor
# on /dev/null, so neither the host nor the $(...) below waits for it), bounded (an
# alarm of 120 s, which an exec keeps) and at the lowest priority (nice 19) beside the
# brief: it never delays the start. os.fork and os.execv, not subprocess: one
# interpreter start less on the path the session waits for.
reader='
import json, os, select, sys, time
data, got, deadline = b"", None, time.monotonic() + 2.0
try:
    while len(data) < 1048576:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([0], [], [], left)[0]:
            break
        chunk = os.read(0, 65536)
        if not chunk:
            break
        data += chunk
        try:
            got = json.loads(data)
            break
        except ValueError:
            pass
except OSError:
    pass
cwd = got.get("cwd") if isinstance(got, dict) else None
path = got.get("transcript_path") if isinstance(got, dict) else None
ok = lambda v: isinstance(v, str) and v and "\0" not in v and "\n" not in v
cwd, path = (cwd if ok(cwd) else ""), (path if ok(path) else "")
sys.stdout.write(cwd + "\n" + path)
sys.stdout.flush()
prog, vault = sys.argv[1:3]
if path and prog and vault and os.fork() == 0:
    try:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.nice(19)
            import signal
            signal.alarm(120)
            args = [prog, "--vault", vault, "ingest", "--missed-beside", path]
            os.execv(prog, args + (["--cwd", cwd] if cwd else []))
    finally:
        os._exit(0)
'
nl='
'
cwd=
transcript=
py=
case $prog in
*/*) ;;
*) prog=$(command -v "${prog:-vaultkeeper}" 2>/dev/null) ;;
esac
if [ ! -t 0 ]; then
    python_of "$prog"
    if [ -n "$py" ]; then
        if [ -n "$prog" ] && [ -x "$prog" ] && [ -d "$vault" ]; then
            set -- "$prog" "$vault"
        else
            set -- "" ""
        fi
        got=$("$py" -I -S -c "$reader" "$@" 2>/dev/null)
        cwd=${got%%"$nl"*}
        case $got in *"$nl"*) transcript=${got#*"$nl"} ;; esac
    fi
fi
brief
exit 0
