#!/bin/sh
# vaultkeeper-hook: session-end
#
# A coding agent's SessionEnd hook: record the session's uses of the vault from its
# transcript (`vaultkeeper ingest`, never throttled), then start the throttled scan,
# and return at once, whatever the vault's or the transcript's size.
#
#   session-end.sh [VAULT [PROGRAM]]
#
# VAULT defaults to $VAULTKEEPER_VAULT; PROGRAM (the vaultkeeper executable) to the
# one on PATH. `vaultkeeper hooks install` writes both as absolute paths.
#
# Hosts kill whatever a hook leaves in its process group the moment it returns, so
# a shell `&` is not enough: a small Python launcher double-forks, calls setsid(),
# and this script returns only once the scan's process reports that it is in a
# session of its own. That detached process then reads the session's JSON from
# stdin (for at most 10 s: a host may keep stdin open) for its `transcript_path`,
# ingests that transcript, then scans. Output is dropped (the scan
# saves its report under state/); a failure, or a transcript that is there but
# unreadable, leaves one line in state/hooks.log. A transcript that was never written
# (`claude mcp list` ends a session that never ran) is no failure: no line. Always exits 0: a hook must never
# fail its host.
#
# Names repeated from vaultkeeper/config.py (a test keeps them in step):
#   ENV_VAULT=VAULTKEEPER_VAULT  STATE_DIR=state  HOOK_LOG_FILE=hooks.log

vault=${1:-${VAULTKEEPER_VAULT:-}}
prog=${2:-}

# the vault's hook log, if it may be appended to: no symlink (it may lead out of the
# vault) and nothing but a regular file (`>>` on a FIFO nobody reads never returns)
plain_log() {
    [ ! -L "$1" ] && { [ ! -e "$1" ] || [ -f "$1" ]; }
}

log() {
    stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
    # a state/ that is a symlink may lead out of the vault: never write through it
    if [ -n "$vault" ] && [ -d "$vault" ] && [ ! -L "$vault/state" ] && plain_log "$vault/state/hooks.log" && mkdir -p "$vault/state" 2>/dev/null; then
        printf '%s session-end: %s\n' "$stamp" "$*" >>"$vault/state/hooks.log" 2>/dev/null
    elif [ -n "${HOME:-}" ]; then
        # no vault to log into: the user's state folder, so the failure is findable
        dir=${XDG_STATE_HOME:-$HOME/.local/state}/vaultkeeper
        mkdir -p "$dir" 2>/dev/null &&
            printf '%s session-end: %s\n' "$stamp" "$*" >>"$dir/hooks.log" 2>/dev/null
    fi
    printf 'vaultkeeper session-end: %s\n' "$*" >&2
}

# The launcher. argv: PROGRAM VAULT LOG. Exits 0 once the work runs in its own session.
launcher='
import json, os, select, subprocess, sys, time
prog, vault, log = sys.argv[1:4]

def note(text):
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:  # never through a symlink (O_NOFOLLOW): it could lead out of the vault
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        return
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write("%s session-end: %s\n" % (stamp, " ".join(text.split())))

def session_json(fd):
    data, deadline = b"", time.monotonic() + 10.0
    try:
        if os.isatty(fd):
            return {}
        while len(data) < 1048576:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
            try:
                return json.loads(data)
            except ValueError:
                pass
        return json.loads(data)
    except (OSError, ValueError):
        return {}

def run(args, what):
    try:
        done = subprocess.run([prog, "--vault", vault] + args, stdin=null, stdout=null, stderr=subprocess.PIPE)
        code, err = done.returncode, done.stderr.decode("utf-8", "replace")
    except OSError as exc:
        code, err = 127, str(exc)
    if code != 0:
        note("%s exited %d: %s" % (what, code, (err.strip().splitlines() or ["no message"])[-1]))

r, w = os.pipe()
if os.fork() == 0:
    try:
        os.close(r)
        os.setsid()
        if os.fork():
            os._exit(0)
        os.chdir("/")
        host = os.dup(0)  # the session JSON is read only once the hook has returned
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.write(w, b"1")
        os.close(w)
        got = session_json(host)
        os.close(host)
        transcript = got.get("transcript_path") if isinstance(got, dict) else None
        if isinstance(transcript, str) and transcript and os.path.lexists(transcript):
            if os.path.isfile(transcript) and os.access(transcript, os.R_OK):
                run(["ingest", transcript], "ingest")
            else:
                note("transcript %s: unreadable; nothing ingested" % transcript)
        run(["scan"], "scan")
    finally:
        os._exit(0)
os.close(w)
os.wait()
sys.exit(0 if os.read(r, 1) == b"1" else 1)
'

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

run() {
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
    if [ -z "$prog" ]; then
        log "vaultkeeper not found on PATH ($PATH); reinstall the hook with: vaultkeeper hooks install claude-code|codex"
        return
    fi
    # the scan starts in / (so it pins no directory): relative paths must go
    case $vault in /*) ;; *) vault=$(pwd)/$vault ;; esac
    case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
    if [ ! -x "$prog" ]; then
        log "$prog: not an executable program; reinstall the hook with: vaultkeeper hooks install claude-code|codex"
        return
    fi
    python_of "$prog"
    if [ -z "$py" ]; then
        log "no python3 on PATH to start the scan in the background"
        return
    fi
    logfile=$vault/state/hooks.log
    # a symlinked state/ (the scan refuses it), or a hooks.log that is a symlink or
    # not a regular file: logged in the user's folder
    if [ -L "$vault/state" ] || ! plain_log "$vault/state/hooks.log"; then
        logfile=${XDG_STATE_HOME:-${HOME:-/tmp}/.local/state}/vaultkeeper/hooks.log
        mkdir -p "${logfile%/*}" 2>/dev/null
    else
        mkdir -p "$vault/state" 2>/dev/null
    fi
    # the launcher's detached process reads the session's JSON from our stdin
    if ! "$py" -I -S -c "$launcher" "$prog" "$vault" "$logfile" >/dev/null 2>&1; then
        log "could not start the scan in the background ($py)"
    fi
}

run
# stdin is left to the detached process (the host's JSON is small: its write never
# waits for a reader), so a host that keeps stdin open cannot hold this hook back.
exit 0
