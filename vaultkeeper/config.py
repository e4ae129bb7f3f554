"""Every threshold, window, file name and environment variable name, defined once.

Anything one might look up or change lives here; a test checks the README and spec by it.
"""

from __future__ import annotations

# -- scheduler ---------------------------------------------------------------
COOLDOWN_MS = 3_600_000  # fixed 1 h cooldown between completed scans
STALE_RUN_MS = 600_000  # 10 min: an in-progress run or a lock older than this is stale
EVIDENCE_MAX_BYTES = 64_000_000  # a path:line receipt is looked for this far, no further
VERIFY_CHILD_BOUND_S = 120.0  # verify waits this long for a child's event before FAIL
LOCK_CLOCK_SLACK_MS = 60_000  # a lock dated further ahead than this is stale (clock skew)
PRUNE_IDLE_DAYS = 90  # count == 0 and last used more than this many days ago
PROMOTE_MIN_COUNT = 2  # success count at or above this is promote-eligible
HOLDOUT_DAYS = 7  # default hold-out window for a new lesson
SUMMARY_PREFIX = "SELF-MAINTAIN:"

# -- environment variables ---------------------------------------------------
ENV_COOLDOWN = "SELF_MAINTAIN_COOLDOWN_MS"
ENV_FORCE = "SELF_MAINTAIN_FORCE"
ENV_VAULT = "VAULTKEEPER_VAULT"
ENV_HOLDOUT_DAYS = "VAULTKEEPER_HOLDOUT_DAYS"
ENV_TODAY = "VAULTKEEPER_TODAY"  # YYYY-MM-DD: every command behaves as on that date
ENV_MCP_DIALOG = "VAULTKEEPER_MCP_DIALOG"  # "1" in `vaultkeeper mcp`'s env: the host's dialog

# -- vault layout --------------------------------------------------------------
INDEX_FILE = "_index.md"
PROJECTS_DIR = "projects"
PATTERNS_DIR = "patterns"
REGISTRY_FILE = "patterns/registry.md"
REFERENCES_DIR = "references"
SPEC_FILE = "references/vault-spec.md"
STATE_DIR = "state"
TRASH_DIR = ".trash"
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"  # skills/NAME/SKILL.md
MEMORY_SUBDIR = "memory"
RESEARCH_SUBDIR = "research"
# A folder holding none of these is not a vault: the commands that need one refuse it
# (commands/base.py vault_path) rather than write a state/ there.
VAULT_MARKS = (INDEX_FILE, PROJECTS_DIR, PATTERNS_DIR)
# Folders whose files are never entries: runtime state, Obsidian's trash and settings, VCS.
OBSIDIAN_DIR = ".obsidian"  # an Obsidian vault's settings: its root
EXCLUDED_DIRS = frozenset({STATE_DIR, TRASH_DIR, OBSIDIAN_DIR, ".git"})

# -- state/ files ---------------------------------------------------------------
STATE_FILE = "self-maintain.json"
LOCK_DIR, LOCK_PID_FILE = "self-maintain.lock", "pid"
JOURNAL_FILE = "journal.jsonl"
QUEUE_FILE = "queue.jsonl"
WRITER_LOCK_FILE = "writer.lock"  # the writer lock's fallback only (store/fsio.py)
# The writer lock's folder is LOCK_ROOT/vaultkeeper-<uid>/, the same for every process of the
# user; ENV_LOCK_ROOT moves it (set it for every process of the user or for none: the tests do)
LOCK_ROOT, ENV_LOCK_ROOT = "/tmp", "VAULTKEEPER_LOCK_ROOT"
# one plain-text log for every trigger (session hooks, recall hooks, plugin, cron): each
# line is "STAMP TRIGGER: text"; hook.log and cron.log of older versions are left alone
HOOK_LOG_FILE = "hooks.log"
MACHINE_FILE = "machine.json"  # this machine's records, not derived (vaultkeeper/store/machine.py)
USES_LOG_FILE = "uses.jsonl"  # the usage log (vaultkeeper/store/uses.py): one JSON line per use
DB_FILE = "vaultkeeper.db"  # the derived store (vaultkeeper/store/db.py), rebuildable

# -- index --------------------------------------------------------------------------
INDEX_START = "<!-- vaultkeeper:index start -->"
INDEX_END = "<!-- vaultkeeper:index end -->"
INDEX_MAX_LINES = 200  # agents such as Claude Code cut their memory index here
INDEX_MAX_BYTES = 25_000

# -- schema ---------------------------------------------------------------------------
STATUSES = ("active", "held_out", "archived")
LABELS = ("fact", "inferred", "rule", "validated-override")
# Promotion weight of each label, as the spec states it; shown in reports.
LABEL_WEIGHTS = {
    "fact": "1x strong",
    "inferred": "hold out",
    "rule": "2x",
    "validated-override": "never auto-demote",
}
REQUIRED_KEYS = ("name", "description", "type", "label")
SCHEMA_KEYS = (
    "name",
    "description",
    "type",
    "status",
    "label",
    "falsification_condition",
    "holdout_until",
    "relations",
    "sources",
    "provenance",
)
ENTRY_KINDS = ("memory", "decision", "research", "reference", "pattern")

# -- registry block counters (bold markdown in the block body) -----------------------
COUNT_LABEL = "**success count:**"
LAST_USED_LABEL = "**last used:**"
PROMOTED_LABEL = "**promoted:**"
# A longer count is refused as too large: int() itself refuses more than 4300 digits,
# and 18 digits is more reuse than any registry will record.
COUNT_MAX_DIGITS = 18

# -- hooks, cron and status --------------------------------------------------
# hooks/*.sh are POSIX sh and cannot import this module: they repeat STATE_DIR,
# HOOK_LOG_FILE, ENV_VAULT and BRIEF_MAX_CHARS, and a test checks
# that the copies agree with the values here.
HOOKS_DIR = "hooks"  # data_dir() name of the shipped hook scripts
HOOK_SCRIPTS = {"SessionEnd": "session-end.sh", "SessionStart": "session-start.sh"}
HOOK_MARKER = "vaultkeeper-hook:"  # a line in each script, so a moved copy is still ours
CLAUDE_SETTINGS = "~/.claude/settings.json"
CODEX_HOOKS = "~/.codex/hooks.json"
# Seconds. Claude Code gives all SessionEnd hooks 1.5 s together and Codex caps
# SessionEnd at 3 s; the hook returns in well under a second either way.
CLAUDE_SESSION_END_TIMEOUT = 1
CODEX_SESSION_END_TIMEOUT = 2
SESSION_START_TIMEOUT = 10  # `report --brief` is one Python start and one small file
HOOK_BACKUP_SUFFIX = ".vaultkeeper.bak"  # the settings file as it was before our last write
# Beside a settings file install created (and the folders it made for it): uninstall
# then removes the file, this record and our backup, and those folders once empty.
HOOK_CREATED_SUFFIX = ".vaultkeeper.created"
BRIEF_MAX_CHARS = 10_000  # a SessionStart hook's output over this is replaced by a path
CRON_SCHEDULE = "17 8 * * *"
CRON_MARKER = "# vaultkeeper-scan"  # followed by the vault's path: one line per vault
# With no vault to log into, the hooks log to $XDG_STATE_HOME/vaultkeeper/hooks.log.
ENV_XDG_STATE = "XDG_STATE_HOME"
XDG_STATE_DEFAULT = "~/.local/state"
STATUS_MAX_WAITING = 10  # candidates of one kind waiting: healthy below this (KIP: < 10)
STATUS_OVERDUE_DAYS = 7  # a held-out entry this many days past holdout_until is overdue
STATUS_SCAN_MAX_AGE_DAYS = 2  # older: the session-end hook probably never fires
STATUS_JOURNAL_MAX_BYTES = 5_000_000  # past this, archive state/journal.jsonl

# -- lint / index -------------------------------------------------------------
# The spec's ASCII replacements for typographic glyphs (lint VK101 names them; --fix uses them).
ASCII_REPLACEMENTS = {
    "\u2014": "--",  # em dash
    "\u2192": "->",  # rightwards arrow
    "\u2212": "-",  # minus sign
    "\u00a7": "sec",  # section sign
    "\u00d7": "x",  # multiplication sign
    "\u2264": "<=",  # less-than or equal to
    "\u2265": ">=",  # greater-than or equal to
}
# VK5xx reads a vault's other text files (.txt, .json ...) up to this size; larger
# files are attachments nobody pastes a key into by hand.
SECRET_SCAN_MAX_BYTES = 1_000_000
MERMAID_DIAGRAMS = ("flowchart TD", "flowchart LR", "stateDiagram-v2")
MERMAID_LABEL_TOKENS = (">", "<", "==", "(")
# Above the load budget the root index links one sub-index per top-level folder,
# _index/_index-<folder>.md ([[_index-<folder>]] resolves by basename, Obsidian's way).
SUBINDEX_DIR = "_index"
SUBINDEX_PREFIX = "_index-"
INDEX_KEYWORDS_MARK = " -- keywords: "

# -- Obsidian vaults vaultkeeper did not create ---------------------------
# Where Obsidian keeps the templates folder: the core Templates plugin, then Templater.
OBSIDIAN_TEMPLATE_SETTINGS = (
    ("templates.json", "folder"),
    ("plugins/templater-obsidian/data.json", "templates_folder"),
)
# With neither set, a top-level folder of this name (any case) is the templates folder.
OBSIDIAN_TEMPLATES_DIR = "Templates"

# -- applier (vaultkeeper/apply/) --------------------------------------------------
TRASH_META_FILE = "trash.json"  # beside the trashed content in .trash/<id>/: how to restore it
PRUNE_ANSWERS_YES = ("y", "yes")  # the only answers that delete (case-insensitive)

# -- ingest: transcripts and the usage log ---------------------------------
# A transcript line longer than this is skipped unread (an agent's own message is far
# shorter; pasted images and huge tool results are not what ingest looks for).
TRANSCRIPT_MAX_LINE_BYTES = 8 * 1024 * 1024
TRANSCRIPT_MAX_BYTES = 2 * 1024**3  # a larger transcript is refused before it is read
TRANSCRIPT_DETECT_LINES = 200  # lines read from a file's head to tell its format
TRANSCRIPT_MAX_COMMAND_CHARS = 20_000  # a longer shell command is not split for reads
USES_COMPACT_BYTES = 32 * 1024 * 1024  # a larger usage log is compacted by the next counting
USES_KEEP_DAYS = 30  # compacting keeps every event of the log's last days whole
USES_WARN_BYTES = 128 * 1024 * 1024  # status warns past this (compacting falls behind)
INGEST_MAX_UNKNOWN = 100  # unknown names an ingest reports by name; the rest are counted
TRANSCRIPT_MAX_LINKS = 1000  # links read in one text of the agent's; the rest are not
INGEST_PATH_CACHE = 4096  # read paths whose meaning ingest remembers (most recent first)
SUBAGENTS_DIR = "subagents"  # <session>/subagents/agent-*.jsonl beside <session>.jsonl
SUBAGENT_GLOB = "agent-*.jsonl"

# -- names and windows checked by `new` -----------------------------------
NAME_MAX_CHARS = 100  # an entry, pattern or project name; longer names hit NAME_MAX
HOLDOUT_MAX_DAYS = 3650  # the largest hold-out window VAULTKEEPER_HOLDOUT_DAYS may set

# -- supersession ------------------------------------------------------------
# An entry replaced by a newer one carries SUPERSEDED_BY: "[[path/of/newer]]"; the newer
# one lists it under SUPERSEDES. Optional keys: the spec's schema allows them on any entry.
SUPERSEDED_BY_KEY = "superseded_by"
SUPERSEDES_KEY = "supersedes"
ANCHORS_KEY = "anchors"  # list of {at, digest, commit} on memory/decision entries
OPTIONAL_KEYS = (SUPERSEDED_BY_KEY, SUPERSEDES_KEY, ANCHORS_KEY, "paths")  # paths: PATHS_KEY

# -- search and the MCP server ------------------------------------------
SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
SEARCH_SNIPPET_CHARS = 160
# Statuses search leaves out unless asked, as it does an entry with a superseded_by.
SEARCH_DEAD_STATUSES = ("archived", "superseded")
MCP_SERVER_NAME = "vaultkeeper"  # the server's name, and its key in a host's server list
# The distribution's name on the index (`vaultkeeper` there is another program). Install
# lines in messages name a clone (".") until it is published there; then DIST_NAME.
DIST_NAME, INSTALL_FROM, INSTALL_WHERE = "vaultkeeper-memory", ".", " in a clone of vaultkeeper"
MCP_INSTALL_HINT = (
    f"pipx install --force '{INSTALL_FROM}[mcp]'{INSTALL_WHERE} (or: uv tool install --force "
    f"'{INSTALL_FROM}[mcp]'; in a virtual environment: pip install '{INSTALL_FROM}[mcp]')"
)
# MCP tools an agent may run alone, approved in Codex by `hooks install codex --mcp`; what
# takes an entry out needs a person (apply_prune keeps Codex's approval). docs/hosts.md.
MCP_AGENT_TOOLS = (
    "recall", "search", "read", "report", "status", "cite", "new_lesson", "new_decision",
    "apply_promote", "apply_revalidate", "apply_reactivate", "apply_skip",
)  # fmt: skip
MCP_PERSON_TOOLS = ("apply_prune",)
CODEX_TOOL_APPROVAL = "approve"  # [mcp_servers.NAME.tools.TOOL] approval_mode (Codex 0.169)
# How long apply_prune waits for an answer to elicitation/create; then it queues (ask).
MCP_ELICIT_TIMEOUT_SECONDS = 600
# From this MCP revision on a tool asks by returning InputRequiredResult (no back-channel).
MCP_ROUNDS_VERSION = "2026-07-28"
CONFIRMED_VIA_TERMINAL = "terminal"  # a prune's journal "confirmed_via": a prompt, review
CONFIRMED_VIA_MCP = "mcp-elicitation"  # ... or the host's dialog (mcp/prune.py, ENV_MCP_DIALOG)
MCP_SOURCE = "mcp"  # the usage log's source for uses recorded through the server
CLI_SOURCE = "cli"  # ... and for `vaultkeeper use NAME`, under the session "cli:<ISO time>"
MCP_CITE_EVIDENCE_CHARS = 300  # a cite's evidence, kept as its receipt "mcp:EVIDENCE"
CLAUDE_USER_CONFIG = "~/.claude.json"  # Claude Code's user-scope mcpServers
CLAUDE_PROJECT_MCP = ".mcp.json"  # Claude Code's project-scope mcpServers
CODEX_CONFIG = "~/.codex/config.toml"  # Codex's [mcp_servers.NAME] tables

# -- duplicates and decay ----------------------------------------------------
# Possible duplicates: Jaccard similarity of two entries' normalised word sets (name and
# description) at or above this. A word carried by more than max(DUP_COMMON_MIN,
# DUP_COMMON_SHARE x entries of the group) entries brings in no pairs by itself.
DUP_MIN_JACCARD = 0.6
DUP_PAIRS_PER_ENTRY = 3  # the report lists an entry's most similar pairs, this many
DUP_MAX_PAIRS = 1000  # and at most this many pairs in all
DUP_COMMON_MIN = 10
DUP_COMMON_SHARE = 0.01
# Decay: an active memory entry no session has cited or read for this many days is
# "stale: re-validate"; a promoted skill no session has invoked for as long, "skill unused".
STALE_DAYS = 180
SKILL_UNUSED_DAYS = 180
MERGED_FROM = "Merged from"  # the heading `apply merge` puts DROP's text under

# Claude Code's auto memory (vaultkeeper.native), as Claude Code 2.1.332 lays it out and
# caps it: what falls past a cap is never recalled, so the review lists it.
CLAUDE_DIR = ".claude"
CLAUDE_PROJECTS_DIR = "projects"
NATIVE_MEMORY_SUBDIR = "memory"
NATIVE_INDEX_FILE = "MEMORY.md"
AUTO_MEMORY_DIR_KEY = "autoMemoryDirectory"
NATIVE_REGISTRY_FILE = "patterns/native-memory.md"  # their counters, in the block format
NATIVE_INDEX_MAX_LINES = 200  # MEMORY.md is cut here at every session start
NATIVE_INDEX_MAX_BYTES = 25_000  # ... or here, whichever comes first
NATIVE_RECALL_MAX_FILES = 200  # the recall reads at most the newest 200 files
NATIVE_FILE_SHOWN_BYTES = 4096  # and shows only this much of a file
NATIVE_DESCRIPTION_MAX = 300  # longer: Claude Code's own lint says shorten it
NATIVE_READ_MAX_BYTES = 1 << 20  # a native file read for review: at most this much
NATIVE_PROMOTE_SESSIONS = 2  # used in this many sessions: a candidate for the vault
NATIVE_RECENT_DAYS = 90  # status: "used in the last 90 days"

# -- code anchors (vaultkeeper/anchors/) -----------------------------------
ANCHOR_MAX_FILE_BYTES = 2_000_000  # a larger file is not read: its anchors are "unchecked"
ANCHOR_MAX_PATH_CHARS = 500
ANCHOR_GIT_TIMEOUT_S = 5.0  # each read-only git call (rev-parse, diff -M, rev-list)
ANCHOR_MAX_MOVE_CANDIDATES = 2000  # files git lists as added/renamed since the commit, at most
ANCHOR_DIGEST_HEX = 16  # "sha256:" + this many hex digits of the digest
REPOSITORY_FILE = "repository.json"  # projects/<p>/repository.json: the repo's id (committed)

# -- point-of-use recall (`hooks install --recall`): the full-text index (search/index.py) in
# state/vaultkeeper.db; recall/moment.py serves from it
RECALL_HOOK_SCRIPT = "recall.sh"
RECALL_HOOK_EVENTS = ("UserPromptSubmit", "PreToolUse")
RECALL_HOOK_TIMEOUT = 5  # seconds; the hook gives up by itself long before (MOMENT_DEADLINE_S)
# PreToolUse file tools per host (a regex); Codex's names per its source: docs/recall.md
RECALL_MATCHERS = {"claude-code": "Read|Edit|Write|MultiEdit|NotebookEdit",
                   "codex": "Bash|apply_patch|Read"}  # fmt: skip
RECALL_SESSION_MAX_DAYS = 7  # a session's served lessons are forgotten by the scan after this
PATHS_KEY = "paths"  # optional frontmatter: globs of the files a lesson is about
MOMENT_MAX_CHARS = 1_200  # all the context one hook call adds
MOMENT_MAX_PROMPT_LESSONS = 3
MOMENT_MAX_FILE_LESSONS = 4  # before a file is touched: anchored first, then globs
MOMENT_MIN_TERM = 3  # shorter prompt words are not looked for
MOMENT_LESSON_CHARS = 360  # one lesson's text at most (name, description, first lines)
MOMENT_DEADLINE_S = 1.0  # past this the hook prints nothing (and logs one line)
# A slower machine may give the recall hook longer (never past the host's RECALL_HOOK_TIMEOUT);
# the tests give it 4 s, so a loaded CI machine does not turn a served lesson into silence.
ENV_RECALL_DEADLINE = "VAULTKEEPER_RECALL_DEADLINE_S"
MOMENT_MAX_STDIN = 1 << 20
MOMENT_NOISE_MIN_SHOWN = 3  # shown at least this often and never cited: noise
# Words too common to say what a lesson is about: left out of a lesson's kept words and
# of the prompt's words alike.
_STOPWORDS = (
    "the and for with that this from are was were have has had not but you your its "
    "can will would should could into when then than them they what which who how why "
    "all any each use used using also just only more most some such our out over very "
    "there their here about after before been being does did doing let make made please "
    "now get got want need see look show tell give try"
)
STOPWORDS = frozenset(_STOPWORDS.split())
