"""Every public name of the Memory Lens language server, in one place.

These are a contract with editors and the VS Code client (`client-vscode/src/protocol.ts`):
keep them in step with that file and with `docs/lsp.md`.
"""

SERVER_NAME = "memory-lens"
SETTINGS_SECTION = "memoryLens"
DIAGNOSTIC_SOURCE = "memory-lens"

# Custom request and notification.
EFFECTIVE_REQUEST = "memory/effective"
DID_CHANGE_NOTIFICATION = "memory/didChange"

# Server commands (workspace/executeCommand). Client palette ids must differ from these.
CMD_SAVE = "memoryLens.server.save"
CMD_REMOVE = "memoryLens.server.remove"
CMD_LIST = "memoryLens.server.list"
CMD_EFFECTIVE = "memoryLens.server.effective"
CMD_REFRESH = "memoryLens.server.refresh"
CMD_MOVE = "memoryLens.server.move"
ALL_COMMANDS = [CMD_SAVE, CMD_REMOVE, CMD_MOVE, CMD_LIST, CMD_EFFECTIVE, CMD_REFRESH]

# Code action titles.
SAVE_PROJECT_TITLE = "Save selection to project memory"
SAVE_GLOBAL_TITLE = "Save selection to global memory"
CHANGE_ANNOTATION_ID = "memoryLens.saveEntry"
SAVE_ACTION_KIND = "refactor.extract.memoryLens"
