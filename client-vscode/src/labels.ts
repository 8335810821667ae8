/**
 * How Memory Lens results read in the UI: status bar text, panel labels, messages.
 * Pure functions over the server's JSON (no VS Code import), unit-tested.
 */

import type {
  AgentName, AgentSource, EffectiveMemory, ListedEntry, MemoryImport, MemorySource, SaveResult, Scope,
} from './protocol';

const ENTRY_LABEL_MAX = 80;

/** "~1 token", "~312 tokens", "~12.3k tokens". */
export function formatTokens(tokens: number): string {
  const n = Math.max(0, Math.round(tokens));
  if (n >= 10_000) {
    return `~${(n / 1000).toFixed(1).replace(/\.0$/, '')}k tokens`;
  }
  return `~${n} token${n === 1 ? '' : 's'}`;
}

export function formatFiles(count: number): string {
  return `${count} file${count === 1 ? '' : 's'}`;
}

/**
 * "3 files · ~120 tokens": what the status bar and the panel header say. Files count as the
 * server's code lens counts them, those that contribute text; unreadable ones are named apart.
 */
export function summary(memory: Pick<EffectiveMemory, 'sources' | 'tokens'>): string {
  const loaded = memory.sources.filter((s) => s.loaded ?? (s.readable && s.tokens > 0)).length;
  const unreadable = memory.sources.filter((s) => !s.readable).length;
  return `${formatFiles(loaded)} · ${formatTokens(memory.tokens)}` + (unreadable ? ` · ${unreadable} unreadable` : '');
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const SERVER_LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error',
};

/**
 * A line the server wrote to stderr ("memory-lens: WARNING: message") as a level and a message
 * for the log. Lines without that prefix (a traceback, Python's own errors) are errors.
 */
export function serverLogLine(line: string): { level: LogLevel; message: string } {
  const m = /^memory-lens: (DEBUG|INFO|WARNING|ERROR|CRITICAL): (.*)$/s.exec(line);
  return m ? { level: SERVER_LEVELS[m[1]], message: `[server] ${m[2]}` } : { level: 'error', message: `[server] ${line}` };
}

/** The status bar text; with AGENT, the agent's name first ("$(book) Codex · 1 file · ~8 tokens"). */
export function statusBarText(memory: Pick<EffectiveMemory, 'sources' | 'tokens'> | undefined, agent?: AgentName): string {
  const who = agent ? `${agentLabel(agent)} · ` : '';
  return memory ? `$(book) ${who}${summary(memory)}` : `$(book) ${who}Memory`;
}

/** The agents of the picker, in its order, with the names the UI shows. */
export const AGENT_LABELS: Readonly<Record<AgentName, string>> = {
  gemini: 'Gemini CLI', claude: 'Claude Code', codex: 'Codex', wave: 'Wave',
  cursor: 'Cursor', copilot: 'Copilot CLI', 'copilot-vscode': 'Copilot Chat',
};

/** AGENT's name in the UI; a name the client does not know (an agent newer than it) as sent. */
export function agentLabel(agent: string): string {
  return Object.hasOwn(AGENT_LABELS, agent) ? AGENT_LABELS[agent as AgentName] : agent;
}

/** The `memoryLens.agent` setting as an agent name; anything else is gemini (the default). */
export function parseAgent(value: unknown): AgentName {
  return typeof value === 'string' && Object.hasOwn(AGENT_LABELS, value) ? value as AgentName : 'gemini';
}

/**
 * An agent's `memory/effective` result (sources with tiers) in the shape the panel and the status
 * bar show: a `user` or `managed` tier reads as global, the others as project; per-source token
 * counts are not sent, so a source shows its bytes and whether the agent loads it.
 */
export function fromAgentView(result: Omit<EffectiveMemory, 'sources'> & { sources: AgentSource[] }): EffectiveMemory {
  return {
    ...result,
    sources: result.sources.map((s) => ({
      uri: s.uri, path: s.path, scope: s.tier === 'user' || s.tier === 'managed' ? 'global' : 'project',
      readable: true, bytes: s.bytes, tokens: 0, dirty: s.dirty, reason: s.reason,
      tier: s.tier, loaded: s.loaded, ...(s.cutAt !== undefined ? { cutAt: s.cutAt } : {}),
      ...(s.when ? { when: s.when } : {}), ...(s.matchedBy ? { matchedBy: s.matchedBy } : {}),
    })),
  };
}

/** Tooltip of the status bar item: one line per source, general to specific. */
export function statusBarTooltip(memory: EffectiveMemory, home?: string): string {
  const lines = [`Effective memory: ${summary(memory)}`];
  for (const src of memory.sources) {
    lines.push(`${src.tier ?? src.scope} · ${displayPath(src.path, memory.projectRoot, home)} · ${sourceState(src)}`);
    lines.push(...skippedImports(src).map((s) => `    not loaded: ${s}`));
  }
  if (memory.sources.length === 0) {
    lines.push('No memory files apply here.');
  }
  lines.push('Click to show the effective memory.');
  return lines.join('\n');
}

/** A path as the panel shows it: relative to the project root, `~/…` under home, else absolute. */
export function displayPath(path: string, projectRoot: string | null | undefined, home?: string): string {
  const norm = (p: string) => p.replace(/\\/g, '/').replace(/\/+$/, '');
  const p = norm(path);
  if (projectRoot) {
    const root = norm(projectRoot);
    if (p.startsWith(root + '/')) {
      return p.slice(root.length + 1);
    }
  }
  if (home) {
    const h = norm(home);
    if (h && p.startsWith(h + '/')) {
      return '~' + p.slice(h.length);
    }
  }
  return path;
}

/** The `@path` imports of SRC the agent does not load ("@x.md (line 3): not-found: …"), depth first. */
export function skippedImports(src: Pick<MemorySource, 'imports'>): string[] {
  const out: string[] = [];
  const walk = (list: readonly MemoryImport[] | undefined) => {
    for (const imp of list ?? []) {
      if (imp.status !== 'imported') {
        out.push(`@${imp.target} (line ${imp.line}): ${imp.status}${imp.message ? `: ${imp.message}` : ''}`);
      }
      walk(imp.children);
    }
  };
  walk(src.imports);
  return out;
}

/** "on read (GLOB) · " for what Claude Code loads only when it reads the file; else "". */
export function whenLabel(src: Pick<MemorySource, 'when' | 'matchedBy'>): string {
  return src.when === 'on-read' ? `on read${src.matchedBy ? ` (${src.matchedBy})` : ''} · ` : '';
}

function sourceState(src: MemorySource): string {
  if (src.loaded !== undefined) {
    const state = !src.loaded ? `not loaded${src.reason ? `: ${src.reason}` : ''}`
      : src.cutAt !== undefined ? `${src.bytes} bytes, cut at byte ${src.cutAt}` : `${src.bytes} bytes`;
    return (src.loaded ? whenLabel(src) : '') + state + (src.dirty ? ' · unsaved edits not included' : '');
  }
  if (!src.readable) {
    return `unreadable${src.reason ? `: ${src.reason}` : ''}`;
  }
  return formatTokens(src.tokens) + (src.dirty ? ' · unsaved edits not included' : '');
}

/** Panel row of a source: label and the grey description beside it. */
export function sourceLabel(src: MemorySource, projectRoot: string | null, home?: string):
  { label: string; description: string; tooltip: string } {
  const label = displayPath(src.path, projectRoot, home);
  const description = `${src.tier ?? src.scope} · ${sourceState(src)}`;
  const skipped = skippedImports(src).map((s) => `not loaded: ${s}`);
  const state = src.loaded !== undefined ? sourceState(src) : `${src.bytes} bytes · ${sourceState(src)}`;
  const onRead = src.when === 'on-read' && src.loaded !== false
    ? [`Loads when Claude reads the open file, not at start${src.matchedBy ? ` (its paths: glob ${src.matchedBy} matches it)` : ''}`] : [];
  const tooltip = [src.path, `${src.tier ?? src.scope} memory · ${state}`, ...onRead, ...skipped].join('\n');
  return { label, description, tooltip };
}

/** Panel row of an entry: its first line, whitespace collapsed, shortened. */
export function entryLabel(text: string, max = ENTRY_LABEL_MAX): string {
  const first = (text.split(/\r\n|\r|\n/).find((l) => l.trim() !== '') ?? '').replace(/\s+/g, ' ').trim();
  const clean = stripMemoryPrefix(first);
  return clean.length > max ? clean.slice(0, max - 1).trimEnd() + '…' : clean;
}

const PREFIX = /^(?:#+|[-*+]+(?:[ \t\r\n]+|$))/;

/**
 * TEXT as it will read once saved: a leading `#` (the quick-memory trigger) and list markers
 * dropped, repeatedly. Display only: the server cleans the text it saves the same way.
 */
export function stripMemoryPrefix(text: string): string {
  let s = text.replace(/\r\n|\r/g, '\n').trim();
  for (;;) {
    const m = PREFIX.exec(s);
    if (!m) {
      return s;
    }
    s = s.slice(m[0].length).trim();
  }
}

/** Validation for the "Remember…" input box: undefined when fine, else the message to show. */
export function validateMemoryText(text: string): string | undefined {
  return stripMemoryPrefix(text) === '' ? 'Type what agents should remember (a leading # is fine).' : undefined;
}

export function scopeName(scope: Scope): string {
  return scope === 'global' ? 'global memory' : 'project memory';
}

/** The confirmation shown after saving. */
export function savedMessage(result: SaveResult, projectRoot?: string | null, home?: string): string {
  const where = `${displayPath(result.path, projectRoot, home)}:${result.line}`;
  if (!result.added) {
    return `Already in ${scopeName(result.scope)} (${where}); nothing written.`;
  }
  return `Saved to ${scopeName(result.scope)}: ${where}${result.created ? ' (file created)' : ''} — ` +
    `"${entryLabel(result.text)}"`;
}

/** The entries of LIST that live in the file at PATH, in file order. */
export function entriesOf(list: readonly ListedEntry[], path: string): ListedEntry[] {
  return list.filter((e) => e.path === path).sort((a, b) => a.line - b.line);
}

/** Title of the effective memory document's tab: whose memory (the agent's) and for which file. */
export function effectiveTitle(targetName: string, annotated: boolean, agent = 'Gemini CLI'): string {
  const safe = targetName.replace(/[/\\?#%]/g, '_') || 'workspace';
  return `${agent} memory (${safe})${annotated ? ' annotated' : ''}.md`;
}
