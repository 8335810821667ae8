"""Every public name of the Memory Lens language server, in one place.

These are a contract with editors and the VS Code client (`client-vscode/src/protocol.ts`):
keep them in step with that file and with `docs/lsp.md` (tests/unit/test_protocol_mirror.py
compares the two modules name for name). The core keeps the diagnostic codes it computes; they are
named here from there.
"""

from memory_lens.core import checks, imports

SERVER_NAME = "memory-lens"
SETTINGS_SECTION = "memoryLens"
DIAGNOSTIC_SOURCE = "memory-lens"
# Diagnostic codes: the codes of `memory-lens check` (core/checks.py, core/imports.py), the same names.
DIAGNOSTIC_CODES = [checks.UNREADABLE, checks.TOO_LARGE, checks.ENCODING, checks.DUPLICATE, checks.REDUNDANT,
                    checks.OVER_BUDGET, checks.NOT_LOADED, checks.LINK_OUTSIDE, *imports.IMPORT_CODES,
                    checks.RULE_MATCHES_NOTHING, checks.INVALID_GLOB, checks.FRONTMATTER,
                    checks.STALE, checks.SECRET, checks.DRIFT]

# The keys of the `memoryLens` settings section the server reads (lsp/config.py), dotted for nested
# objects. `noteDocuments` is set by a client that opens note documents, not by users.
SETTINGS_KEYS = ["filenames", "globalDir", "tokenBudget", "maxFileSize", "agents", "debug", "notes.layout",
                 "notes.globalDir", "noteDocuments", "followOutsideLinks", "save.preview"]

# Custom request and notification.
EFFECTIVE_REQUEST = "memory/effective"
EXPLAIN_REQUEST = "memory/explain"
DID_CHANGE_NOTIFICATION = "memory/didChange"
NOTES_DID_CHANGE_NOTIFICATION = "memory/notesDidChange"
NOTE_SCHEME = "memory-lens-note"  # a note's Markdown document: memory-lens-note:/<scope>/<name>.md?root=...

# Server commands (workspace/executeCommand). Client palette ids must differ from these.
CMD_SAVE = "memoryLens.server.save"
CMD_REMOVE = "memoryLens.server.remove"
CMD_LIST = "memoryLens.server.list"
CMD_EFFECTIVE = "memoryLens.server.effective"
CMD_REFRESH = "memoryLens.server.refresh"
CMD_MOVE = "memoryLens.server.move"
CMD_FIX_DRIFT = "memoryLens.server.fixDrift"  # the drift quick fix that writes files (core/drift_fix.py)
CMD_NOTES_LIST = "memoryLens.server.notes.list"
CMD_NOTES_SEARCH = "memoryLens.server.notes.search"
CMD_NOTES_READ = "memoryLens.server.notes.read"
CMD_NOTES_CREATE = "memoryLens.server.notes.create"
CMD_NOTES_EDIT = "memoryLens.server.notes.edit"
CMD_NOTES_DELETE = "memoryLens.server.notes.delete"
CMD_NOTES_READ_DOCUMENT = "memoryLens.server.notes.readDocument"
CMD_NOTES_WRITE_DOCUMENT = "memoryLens.server.notes.writeDocument"
CMD_NOTES_SUGGEST_NAME = "memoryLens.server.notes.suggestName"
NOTES_COMMANDS = [CMD_NOTES_LIST, CMD_NOTES_SEARCH, CMD_NOTES_READ, CMD_NOTES_CREATE, CMD_NOTES_EDIT,
                  CMD_NOTES_DELETE, CMD_NOTES_READ_DOCUMENT, CMD_NOTES_WRITE_DOCUMENT, CMD_NOTES_SUGGEST_NAME]
SERVER_COMMANDS = [CMD_SAVE, CMD_REMOVE, CMD_MOVE, CMD_LIST, CMD_EFFECTIVE, CMD_REFRESH, CMD_FIX_DRIFT,
                   *NOTES_COMMANDS]

# Code action titles.
SAVE_PROJECT_TITLE = "Save selection to project memory"
SAVE_GLOBAL_TITLE = "Save selection to global memory"
REMOVE_DUPLICATE_TITLE = "Remove duplicate entry"  # quick fix of a `duplicate` diagnostic
REMOVE_REDUNDANT_TITLE = "Remove redundant entry"  # quick fix of a `redundant` diagnostic
REMOVE_SECRET_TITLE = "Remove the entry holding a secret"  # quick fix of a `secret` diagnostic
# A write refused because its text holds a secret: a RequestFailed error whose `data` is
# {"secret": {"kind", "line", "column"}}; the command succeeds when sent again with ALLOW_SECRET_ARG true.
SECRET_ERROR_KEY = "secret"
ALLOW_SECRET_ARG = "allowSecret"
BRIDGE_TITLE = "Make {source} the source: import it in {copy}"  # quick fix of a `drift` diagnostic
CHANGE_ANNOTATION_ID = "memoryLens.saveEntry"
SAVE_ACTION_KIND = "refactor.extract.memoryLens"
