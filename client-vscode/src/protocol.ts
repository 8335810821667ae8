/**
 * Every public name of the Memory Lens language server, in one place.
 *
 * Mirrors `server/memory_lens/lsp/protocol.py` and `docs/lsp.md`: keep the three in step.
 * Types describe the JSON the server sends; the client shows it and adds no memory logic.
 */

export const SERVER_NAME = 'memory-lens';
export const SETTINGS_SECTION = 'memoryLens';
export const DIAGNOSTIC_SOURCE = 'memory-lens';

/** Custom request and notification. */
export const EFFECTIVE_REQUEST = 'memory/effective';
export const DID_CHANGE_NOTIFICATION = 'memory/didChange';

/** Server commands (workspace/executeCommand, one object argument). */
export const CMD_SAVE = 'memoryLens.server.save';
export const CMD_REMOVE = 'memoryLens.server.remove';
export const CMD_MOVE = 'memoryLens.server.move';
export const CMD_LIST = 'memoryLens.server.list';
export const CMD_EFFECTIVE = 'memoryLens.server.effective';
export const CMD_REFRESH = 'memoryLens.server.refresh';
export const SERVER_COMMANDS: readonly string[] = [
  CMD_SAVE, CMD_REMOVE, CMD_MOVE, CMD_LIST, CMD_EFFECTIVE, CMD_REFRESH,
];

/** Code action titles (offered by the server; listed here for tests and docs). */
export const SAVE_PROJECT_TITLE = 'Save selection to project memory';
export const SAVE_GLOBAL_TITLE = 'Save selection to global memory';

/** Client (palette) command ids. They must differ from the server command ids above. */
export const CLIENT_COMMANDS = {
  remember: 'memoryLens.remember',
  saveSelectionToProject: 'memoryLens.saveSelectionToProject',
  saveSelectionToGlobal: 'memoryLens.saveSelectionToGlobal',
  showEffectiveMemory: 'memoryLens.showEffectiveMemory',
  toggleAnnotated: 'memoryLens.toggleAnnotated',
  openGlobalMemoryFile: 'memoryLens.openGlobalMemoryFile',
  refresh: 'memoryLens.refresh',
  restartServer: 'memoryLens.restartServer',
  showLog: 'memoryLens.showLog',
  openEntry: 'memoryLens.openEntry',
  deleteEntry: 'memoryLens.deleteEntry',
  moveEntryToGlobal: 'memoryLens.moveEntryToGlobal',
  moveEntryToProject: 'memoryLens.moveEntryToProject',
} as const;

/** The tree view in the Explorer and the scheme of the effective memory document. */
export const PANEL_VIEW_ID = 'memoryLens.panel';
export const EFFECTIVE_SCHEME = 'memory-lens';

export type Scope = 'global' | 'project';

/** One memory file of the chain, general to specific. */
export interface MemorySource {
  uri: string;
  path: string;
  scope: Scope;
  readable: boolean;
  bytes: number;
  tokens: number;
  /** An open buffer of this file has unsaved edits (the result reflects the disk). */
  dirty?: boolean;
  /** Why an unreadable file is skipped. */
  reason?: string;
}

/** Result of `memory/effective` and of `memoryLens.server.effective`. */
export interface EffectiveMemory {
  text: string;
  projectRoot: string | null;
  tokens: number;
  targetDir?: string | null;
  sources: MemorySource[];
  annotated?: string;
}

export interface EffectiveParams {
  textDocument: { uri: string };
  annotated?: boolean;
}

export interface SaveArgs {
  text: string;
  scope: Scope;
  uri?: string;
}

export interface SaveResult {
  path: string;
  uri: string;
  scope: Scope;
  text: string;
  /** 1-based. */
  line: number;
  added: boolean;
  created: boolean;
}

export type RemoveArgs = { uri: string; line: number } | { text: string; scope?: Scope; uri?: string };

export interface RemoveResult {
  path: string;
  uri: string;
  scope: Scope;
  text: string;
  line: number;
}

export interface MoveArgs {
  uri: string;
  line: number;
  scope: Scope;
  /** A document or folder of the destination project (default: the entry's own project). */
  contextUri?: string;
}

export interface ListArgs {
  scope: Scope | 'all';
  uri?: string;
}

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }

export interface ListedEntry {
  text: string;
  path: string;
  uri: string;
  /** 1-based first and last line. */
  line: number;
  endLine: number;
  scope: Scope;
  /** 0-based LSP range of the entry. */
  range?: LspRange;
}

export interface RefreshResult { files: number }

export interface DidChangeParams { uris?: string[] }

/** The `memoryLens` settings the server reads (initializationOptions and workspace/configuration). */
export interface ServerSettings {
  filenames: string[];
  globalDir: string | null;
  tokenBudget: number | null;
  debug: boolean;
}
