/**
 * The Agents view's rows and the status bar's agent count, from the `memory/explain` matrix
 * (which agent reads which instruction file for the active file, and why not). Pure,
 * unit-tested; agentsView.ts turns the rows into tree items.
 */

import { agentLabel, displayPath } from './labels';
import type { ExplainFile, ExplainResult, ExplainStatus } from './protocol';

/** Icon (codicon) and theme colour per status; a status the client does not know gets the last. */
const STATUS_ICONS: Readonly<Record<string, { icon: string; color?: string; words: string }>> = {
  loaded: { icon: 'pass', color: 'testing.iconPassed', words: 'loaded' },
  'on-read': { icon: 'eye', color: 'charts.blue', words: 'on read' },
  requestable: { icon: 'question', color: 'charts.yellow', words: 'requestable' },
  'not-loaded': { icon: 'circle-slash', color: 'disabledForeground', words: 'not loaded' },
};
const UNKNOWN_STATUS = { icon: 'circle-outline', color: undefined, words: '' };

/** The statuses that mean the agent reads the file for this document (at start or on reading it). */
const LOADS = new Set(['loaded', 'on-read']);

export interface FileRow {
  agent: string;
  path: string;
  /** The file's URI (the server's, else none: the view makes one from `path`). */
  uri?: string;
  status: string;
  label: string;
  description: string;
  tooltip: string;
  icon: string;
  color?: string;
}

export interface AgentRow {
  agent: string;
  label: string;
  description: string;
  tooltip: string;
  /** At least one file loads (at start or on read). */
  loadsSomething: boolean;
  files: FileRow[];
}

/** The status as the view says it: "loaded", "on read · src/**", "not loaded", cut, … */
export function statusWords(st: ExplainStatus): string {
  const words = (STATUS_ICONS[st.status] ?? UNKNOWN_STATUS).words || st.status;
  return [words, st.matchedBy, st.cutAt !== undefined ? `cut at byte ${st.cutAt}` : undefined]
    .filter((x) => x !== undefined && x !== '').join(' · ');
}

function fileRow(agent: string, file: ExplainFile, st: ExplainStatus, target: string, root?: string | null, home?: string): FileRow {
  const look = STATUS_ICONS[st.status] ?? UNKNOWN_STATUS;
  const tooltip = [
    file.path,
    `${agentLabel(agent)}: ${statusWords(st)}`,
    ...(st.status === 'on-read' ? [`Loads when ${agentLabel(agent)} reads ${target}${st.matchedBy ? ` (matched by ${st.matchedBy})` : ''}`] : []),
    ...(st.reason ? [st.reason] : []),
  ].join('\n');
  return {
    agent, path: file.path, ...(file.uri ? { uri: file.uri } : {}), status: st.status,
    label: displayPath(file.path, root, home), description: statusWords(st), tooltip, icon: look.icon,
    ...(look.color ? { color: look.color } : {}),
  };
}

function countsOf(files: readonly FileRow[]): string {
  const counts = new Map<string, number>();
  for (const f of files) {
    counts.set(f.status, (counts.get(f.status) ?? 0) + 1);
  }
  return [...counts].map(([status, n]) => `${n} ${(STATUS_ICONS[status] ?? UNKNOWN_STATUS).words || status}`).join(' · ');
}

/**
 * One row per agent of RESULT, in its order, each with the files it has a status for, in the
 * order the agents load them. Paths read relative to ROOT (the workspace folder), `~` for HOME.
 */
export function agentRows(result: ExplainResult, root?: string | null, home?: string): AgentRow[] {
  const target = baseName(result.path);
  return result.agents.map((agent) => {
    const files = result.files.flatMap((f) => {
      const st = f.statuses[agent];
      return st ? [fileRow(agent, f, st, target, root, home)] : [];
    });
    const loadsSomething = files.some((f) => LOADS.has(f.status));
    const description = files.length === 0 ? 'no instruction files' : countsOf(files);
    return {
      agent, label: agentLabel(agent), description, loadsSomething, files,
      tooltip: `${agentLabel(agent)} (${agent}) for ${result.path}: ${loadsSomething ? description : `loads nothing; ${description}`}`,
    };
  });
}

/** The agents that load something for the document (at start or when they read it). */
export function agentsLoading(result: ExplainResult): string[] {
  return result.agents.filter((a) => result.files.some((f) => LOADS.has(f.statuses[a]?.status ?? '')));
}

/** Status bar text: "$(organization) 3 agents". */
export function agentsStatusText(result: ExplainResult): string {
  const n = agentsLoading(result).length;
  return `$(organization) ${n} agent${n === 1 ? '' : 's'}`;
}

/** Status bar tooltip: which agents load something for the file, and which none. */
export function agentsStatusTooltip(result: ExplainResult): string {
  const loading = agentsLoading(result);
  const none = result.agents.filter((a) => !loading.includes(a));
  return [
    `${loading.length} of ${result.agents.length} agents load instructions for ${baseName(result.path)}` +
      (loading.length ? `: ${loading.map(agentLabel).join(', ')}` : ''),
    ...(none.length ? [`Nothing loaded by ${none.map(agentLabel).join(', ')}`] : []),
    'Click to show the Agents view.',
  ].join('\n');
}

/** The server's answer checked for the shape the view needs; a one-line error otherwise. */
export function parseExplain(value: unknown): ExplainResult {
  const v = value as Partial<ExplainResult> | null;
  if (!v || typeof v !== 'object' || typeof v.path !== 'string' || !Array.isArray(v.agents) || !Array.isArray(v.files)
    || !v.agents.every((a) => typeof a === 'string')
    || !v.files.every((f) => f && typeof f.path === 'string' && f.statuses && typeof f.statuses === 'object')) {
    throw new Error('the server\'s memory/explain answer is not the {path, agents, files} matrix');
  }
  return v as ExplainResult;
}

/** JSON-RPC "method not found": a server older than the Agents view. */
export const METHOD_NOT_FOUND = -32601;

/** The one line the Agents view shows when the request fails (CODE: the JSON-RPC error code, if any). */
export function explainErrorMessage(code: number | undefined, message: string, file: string): string {
  if (code === METHOD_NOT_FOUND) {
    return 'This Memory Lens server does not answer memory/explain: update memory-lens (or set memoryLens.server.command to a newer one).';
  }
  return `Could not tell which agents read what for ${baseName(file)}: ${message.split('\n')[0]}`;
}

function baseName(p: string): string {
  return p.replace(/[\\/]+$/, '').split(/[\\/]/).pop() || p;
}
