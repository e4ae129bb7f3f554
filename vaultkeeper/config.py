"""Every threshold, window, file name and environment variable name, defined once.

Anything a person might want to look up or change lives here; the README and the
spec template are checked against these values by a test so no stale copy survives.
"""

from __future__ import annotations

# -- scheduler ---------------------------------------------------------------
COOLDOWN_MS = 3_600_000  # fixed 1 h cooldown between completed scans
STALE_RUN_MS = 600_000  # 10 min: an in-progress run or a lock older than this is stale
PRUNE_IDLE_DAYS = 90  # count == 0 and last used more than this many days ago
PROMOTE_MIN_COUNT = 2  # success count at or above this is promote-eligible
HOLDOUT_DAYS = 7  # default hold-out window for a new lesson
SUMMARY_PREFIX = "SELF-MAINTAIN:"

# -- environment variables ---------------------------------------------------
ENV_COOLDOWN = "SELF_MAINTAIN_COOLDOWN_MS"
ENV_FORCE = "SELF_MAINTAIN_FORCE"
ENV_VAULT = "VAULTKEEPER_VAULT"
ENV_HOLDOUT_DAYS = "VAULTKEEPER_HOLDOUT_DAYS"

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
MEMORY_SUBDIR = "memory"
RESEARCH_SUBDIR = "research"
# Folders whose files are never entries: runtime state, Obsidian's trash and settings, VCS.
EXCLUDED_DIRS = frozenset({STATE_DIR, TRASH_DIR, ".obsidian", ".git"})

# -- state/ files ---------------------------------------------------------------
STATE_FILE = "self-maintain.json"
LOCK_DIR = "self-maintain.lock"
LOCK_PID_FILE = "pid"
LAST_REPORT_FILE = "last-report.json"
JOURNAL_FILE = "journal.jsonl"
QUEUE_FILE = "queue.jsonl"
WRITER_LOCK_FILE = "writer.lock"
HOOK_LOG_FILE = "hook.log"
CRON_LOG_FILE = "cron.log"

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
