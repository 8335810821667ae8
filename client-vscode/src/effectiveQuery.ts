/**
 * The query part of an effective memory document's URI (`memory-lens:/<title>?<query>`):
 * which file the memory is for, whether the annotated form is shown and whose view (the agent;
 * absent for gemini). Pure, unit-tested.
 */

import { parseAgent } from './labels';
import type { AgentName } from './protocol';

export interface EffectiveDocTarget {
  /** The URI (string) of the file or folder whose effective memory the document shows. */
  target: string;
  annotated: boolean;
  /** Whose view; gemini when absent. */
  agent?: AgentName;
}

export function formatEffectiveQuery(doc: EffectiveDocTarget): string {
  const params = new URLSearchParams({ target: doc.target });
  if (doc.annotated) {
    params.set('annotated', '1');
  }
  if (doc.agent && doc.agent !== 'gemini') {
    params.set('agent', doc.agent);
  }
  return params.toString();
}

export function parseEffectiveQuery(query: string): EffectiveDocTarget | undefined {
  const params = new URLSearchParams(query);
  const target = params.get('target');
  if (!target) {
    return undefined;
  }
  const agent = params.get('agent');
  return { target, annotated: params.get('annotated') === '1', ...(agent ? { agent: parseAgent(agent) } : {}) };
}

/** Where the global memory file is when the server has not reported one (it may not exist yet).
 *  Same order as the server: the setting, then MEMORY_LENS_GLOBAL_DIR, then ~/.gemini. */
export function globalMemoryPath(
  settingDir: string | null | undefined,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  filenames: readonly string[],
  sep = '/',
): string {
  const expand = (p: string) => (p === '~' || p.startsWith('~/') || p.startsWith('~\\') ? home + p.slice(1) : p);
  const fromEnv = (env.MEMORY_LENS_GLOBAL_DIR ?? '').trim();
  const dir = settingDir && settingDir.trim() !== '' ? expand(settingDir.trim())
    : fromEnv !== '' ? expand(fromEnv)
      : `${home}${sep}.gemini`;
  const name = filenames.find((n) => n.trim() !== '')?.trim() ?? 'GEMINI.md';
  return dir.endsWith(sep) ? dir + name : `${dir}${sep}${name}`;
}
