/**
 * Every public name of the Memory Lens language server, in one place.
 *
 * Mirrors `server/memory_lens/lsp/protocol.py` and `docs/lsp.md`: keep the three in step.
 * Types describe the JSON the server sends; the client shows it and adds no memory logic.
 */

export const SERVER_NAME = 'memory-lens';
export const SETTINGS_SECTION = 'memoryLens';
export const DIAGNOSTIC_SOURCE = 'memory-lens';
/** Diagnostic codes: the codes of `memory-lens check`. */
export const DIAGNOSTIC_CODES: readonly string[] = [
  'unreadable', 'too-large', 'encoding', 'duplicate', 'redundant', 'over-budget', 'not-loaded', 'link-outside',
  'import-not-found', 'import-outside-root', 'import-cycle', 'import-depth',
  'rule-matches-nothing', 'invalid-glob', 'frontmatter',
  'stale', 'secret', 'drift',
];
/** The keys of the settings section the server reads (dotted for nested objects); see `ServerSettings`. */
export const SETTINGS_KEYS: readonly string[] = [
  'filenames', 'globalDir', 'tokenBudget', 'maxFileSize', 'agents', 'debug', 'notes.layout',
  'notes.globalDir', 'noteDocuments', 'followOutsideLinks', 'save.preview',
];

/** The agents whose view `memory/effective` gives (`agent`); gemini's is the default, sent as no `agent`. */
export type AgentName = 'gemini' | 'claude' | 'codex' | 'wave' | 'cursor' | 'copilot' | 'copilot-vscode';

/** Custom request and notification. */
export const EFFECTIVE_REQUEST = 'memory/effective';
/** Which agent loads which instruction file for a document, and why not (docs/lsp.md). */
export const EXPLAIN_REQUEST = 'memory/explain';
export const DID_CHANGE_NOTIFICATION = 'memory/didChange';
export const NOTES_DID_CHANGE_NOTIFICATION = 'memory/notesDidChange';
/** A note's Markdown document: memory-lens-note:/<scope>/<name>.md?root=<project root> (opaque to the client). */
export const NOTE_SCHEME = 'memory-lens-note';

/** Server commands (workspace/executeCommand, one object argument). */
export const CMD_SAVE = 'memoryLens.server.save';
export const CMD_REMOVE = 'memoryLens.server.remove';
export const CMD_MOVE = 'memoryLens.server.move';
export const CMD_FIX_DRIFT = 'memoryLens.server.fixDrift';
export const CMD_LIST = 'memoryLens.server.list';
export const CMD_EFFECTIVE = 'memoryLens.server.effective';
export const CMD_REFRESH = 'memoryLens.server.refresh';
export const CMD_NOTES_LIST = 'memoryLens.server.notes.list';
export const CMD_NOTES_SEARCH = 'memoryLens.server.notes.search';
export const CMD_NOTES_READ = 'memoryLens.server.notes.read';
export const CMD_NOTES_CREATE = 'memoryLens.server.notes.create';
export const CMD_NOTES_EDIT = 'memoryLens.server.notes.edit';
export const CMD_NOTES_DELETE = 'memoryLens.server.notes.delete';
export const CMD_NOTES_READ_DOCUMENT = 'memoryLens.server.notes.readDocument';
export const CMD_NOTES_WRITE_DOCUMENT = 'memoryLens.server.notes.writeDocument';
export const CMD_NOTES_SUGGEST_NAME = 'memoryLens.server.notes.suggestName';
export const NOTES_COMMANDS: readonly string[] = [
  CMD_NOTES_LIST, CMD_NOTES_SEARCH, CMD_NOTES_READ, CMD_NOTES_CREATE, CMD_NOTES_EDIT, CMD_NOTES_DELETE,
  CMD_NOTES_READ_DOCUMENT, CMD_NOTES_WRITE_DOCUMENT, CMD_NOTES_SUGGEST_NAME,
];
export const SERVER_COMMANDS: readonly string[] = [
  CMD_SAVE, CMD_REMOVE, CMD_MOVE, CMD_LIST, CMD_EFFECTIVE, CMD_REFRESH, CMD_FIX_DRIFT, ...NOTES_COMMANDS,
];

/** Kind of the "Save selection to … memory" code actions. */
export const SAVE_ACTION_KIND = 'refactor.extract.memoryLens';

/** Code action titles (offered by the server; listed here for tests and docs). */
export const SAVE_PROJECT_TITLE = 'Save selection to project memory';
export const SAVE_GLOBAL_TITLE = 'Save selection to global memory';
export const REMOVE_DUPLICATE_TITLE = 'Remove duplicate entry';
export const REMOVE_REDUNDANT_TITLE = 'Remove redundant entry';
export const REMOVE_SECRET_TITLE = 'Remove the entry holding a secret';
/** A write refused for a secret: RequestFailed with `data.secret` ({kind, line, column}); send it again with `allowSecret: true`. */
export const SECRET_ERROR_KEY = 'secret';
export const ALLOW_SECRET_ARG = 'allowSecret';
export const BRIDGE_TITLE = 'Make {source} the source: import it in {copy}';
/** Id of the change annotation on the server's save edits. */
export const CHANGE_ANNOTATION_ID = 'memoryLens.saveEntry';

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
  createNoteFromSelection: 'memoryLens.createNoteFromSelection',
  searchNotes: 'memoryLens.searchNotes',
  clearNoteSearch: 'memoryLens.clearNoteSearch',
  refreshNotes: 'memoryLens.refreshNotes',
  openNote: 'memoryLens.openNote',
  openNoteFile: 'memoryLens.openNoteFile',
  deleteNote: 'memoryLens.deleteNote',
  loadMoreNotes: 'memoryLens.loadMoreNotes',
  chooseAgent: 'memoryLens.chooseAgent',
} as const;

/** The tree views in the Explorer and the scheme of the effective memory document. */
export const PANEL_VIEW_ID = 'memoryLens.panel';
export const NOTES_VIEW_ID = 'memoryLens.notes';
export const AGENTS_VIEW_ID = 'memoryLens.agentsView';
/** Context key: the notes view shows search results (enables "Clear Note Search"). */
export const NOTES_SEARCH_CONTEXT = 'memoryLens.notesSearchActive';
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
  /** The file's `@path` import tree (docs/lsp.md: `memory-lens show --format json`). */
  imports?: MemoryImport[];
  /** In an agent's view (`agent` other than gemini): the agent's tier for the file ("user", "project", ...). */
  tier?: string;
  /** In an agent's view: whether the agent loads the file. */
  loaded?: boolean;
  /** In an agent's view: the byte offset where the agent stops reading the file. */
  cutAt?: number;
  /** Claude Code's view: loaded at start, or when Claude reads the document ("on-read"). */
  when?: SourceWhen;
  /** An on-read rule: the `paths:` glob that matched the document. */
  matchedBy?: string;
}

export type SourceWhen = 'start' | 'on-read';

/** One `@path` import of a memory file, with the imports of the file it pulls in. */
export interface MemoryImport {
  file: string;
  line: number;
  target: string;
  status: string;
  path: string | null;
  message?: string | null;
  children: MemoryImport[];
}

/** Result of `memory/effective` and of `memoryLens.server.effective`. */
export interface EffectiveMemory {
  text: string;
  projectRoot: string | null;
  tokens: number;
  targetDir?: string | null;
  sources: MemorySource[];
  annotated?: string;
  /** Whose view this is; absent for gemini's. */
  agent?: AgentName;
  warnings?: string[];
}

/** One source of an agent's view as the server sends it (docs/lsp.md, `memory/effective` with `agent`). */
export interface AgentSource {
  uri: string;
  path: string;
  tier: string;
  bytes: number;
  loaded: boolean;
  cutAt?: number;
  cutLine?: number;
  importedFrom?: string;
  reason?: string;
  dirty?: boolean;
  when?: SourceWhen;
  matchedBy?: string;
}

export interface EffectiveParams {
  textDocument: { uri: string };
  annotated?: boolean;
  /** Sent only for an agent other than gemini. */
  agent?: AgentName;
  /** For `copilot-vscode`: the chat settings (`chatSettings`). */
  vscodeSettings?: Record<string, unknown>;
}

/** `memory/explain` params: the document, and the agents to ask about (default: every agent the server knows). */
export interface ExplainParams {
  textDocument: { uri: string };
  agents?: string[];
  /** The chat settings `copilot-vscode` follows (`chatSettings`). */
  vscodeSettings?: Record<string, unknown>;
}

export interface ExplainStatus {
  /** `loaded` | `on-read` | `requestable` | `not-loaded`; a status the client does not know is shown as sent. */
  status: string;
  reason?: string;
  matchedBy?: string;
  cutAt?: number;
}

/** One instruction file of the matrix, with each agent's status for it. */
export interface ExplainFile {
  path: string;
  uri?: string;
  statuses: Record<string, ExplainStatus>;
}

/** Result of `memory/explain` (same as `memory-lens explain PATH --format json`), files as the agents load them. */
export interface ExplainResult {
  path: string;
  agents: string[];
  files: ExplainFile[];
}

export interface SaveArgs {
  text: string;
  scope: Scope;
  uri?: string;
  /** Save text holding a secret (sent only after the user confirmed it: `MemoryServer.command`). */
  allowSecret?: boolean;
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

/** `{uri, line, text}` undoes a save: only an entry with that text (nearest LINE) is removed. */
export type RemoveArgs = { uri: string; line: number; text?: string } | { text: string; scope?: Scope; uri?: string };

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
  allowSecret?: boolean;
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
  /** `agents`: the agents checked for over-budget and not-loaded (null: the server's default). */
  agents: string[] | null;
  debug: boolean;
  notes: { layout: 'memory-lens' | 'aicoder' | null; globalDir: string | null };
  /** Write through links out of the project (a machine-scoped setting; docs/security.md). */
  followOutsideLinks: boolean;
  /** `save.preview`: save code actions carry an edit to review instead of saving at once. */
  save: { preview: boolean };
}

/* Notes (docs/lsp.md#notes) ----------------------------------------------------------------- */

export type NotesScope = Scope | 'both';

export interface NotesListArgs {
  /** A document or folder: its project's notes (default: the first workspace folder's). */
  uri?: string;
  search?: string;
  tags?: string[];
  scope?: NotesScope;
  limit?: number;
  cursor?: string;
}

export interface NotesSearchArgs extends Omit<NotesListArgs, 'search'> { query: string }

/** A note in a page: everything but its content. */
export interface NoteSummary {
  name: string;
  scope: Scope;
  tags: string[];
  snippet: string;
  createdAt: string;
  updatedAt: string;
  /** A global note hidden by a project note of the same name. */
  shadowed: boolean;
  revision: string;
  path: string;
  fileUri: string;
  documentUri: string;
  /** Search results only: BM25, lower is better. */
  score?: number;
}

export interface NoteProblem { scope: Scope; path: string; uri: string; reason: string }

export interface NotesPage {
  notes: NoteSummary[];
  total: number;
  nextCursor: string | null;
  /** First page only. */
  problems: NoteProblem[];
  projectRoot: string | null;
  layout: 'memory-lens' | 'aicoder';
  directories: { project?: string; global: string };
}

export interface Note {
  name: string;
  scope: Scope;
  tags: string[];
  content: string;
  createdAt: string;
  updatedAt: string;
  revision: string;
  path: string;
  fileUri: string;
  documentUri: string;
  markdown: string;
}

export interface NoteReadArgs { name: string; scope?: Scope; uri?: string }
export interface NoteCreateArgs { name: string; content: string; tags?: string[]; scope?: Scope; uri?: string }
export interface NoteEditArgs {
  name: string;
  content?: string;
  tags?: string[];
  scope?: Scope;
  revision?: string;
  uri?: string;
}
export interface NoteDeleteArgs { name: string; scope?: Scope; revision?: string; uri?: string }
export interface NoteEditResult { changed: boolean; note: Note }
export interface NoteDeleteResult { deleted: { name: string; scope: Scope; path: string; documentUri: string } }

export interface NoteDocument {
  documentUri: string;
  name: string;
  scope: Scope;
  markdown: string;
  revision: string;
  /** UTF-8 bytes of `markdown`. */
  size: number;
  /** Milliseconds since the epoch. */
  mtime: number;
  path: string;
}

export interface NoteWriteDocumentArgs { documentUri: string; markdown: string; revision?: string; force?: boolean }

/** `data` of the RequestFailed error of an edit or a document save refused because the note changed. */
export interface NoteConflictData { conflict: true; revision: string | null }

export interface NoteSuggestNameArgs { content: string; scope?: Scope; uri?: string }
export interface NoteSuggestNameResult { name: string; scope: Scope }

export interface NotesDidChangeParams { documentUris: string[] }
