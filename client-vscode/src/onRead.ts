/**
 * Claude Code's effective memory for a file in two parts: what loads at start, and what loads
 * only when Claude reads the file (sources with `when: "on-read"`). The server sends one text,
 * each file a block `Contents of PATH…:` joined by blank lines, the on-read blocks last; this
 * marks where each on-read block starts, with the glob that matched. Pure, unit-tested.
 */

import type { MemorySource } from './protocol';

export type OnReadSource = Pick<MemorySource, 'path' | 'when' | 'matchedBy' | 'loaded'>;

/** The marker line above an on-read block, e.g. "loads when Claude reads app.ts (paths: src/**)". */
export function onReadMarker(fileName: string, matchedBy?: string): string {
  return `<!-- Memory Lens: loads when Claude reads ${fileName}${matchedBy ? ` (paths: ${matchedBy})` : ''}, not at start -->`;
}

export const START_MARKER = '<!-- Memory Lens: loads at start -->';

/**
 * TEXT with a marker line above each on-read block (the file read is FILENAME) and one above
 * what loads at start; TEXT itself when nothing loads on read. The rest is the agent's text.
 */
export function markOnRead(text: string, sources: readonly OnReadSource[], fileName: string): string {
  const onRead = sources.filter((s) => s.when === 'on-read' && s.loaded !== false);
  const marks: { at: number; src: OnReadSource }[] = [];
  // From the end: the on-read blocks come last, in source order; a file's own text cannot hide a later block.
  let end = text.length;
  for (const src of [...onRead].reverse()) {
    const header = `Contents of ${src.path}:\n`;
    let at = text.lastIndexOf(header, end);
    while (at > 0 && !text.startsWith('\n\n', at - 2)) {
      at = text.lastIndexOf(header, at - 1);
    }
    if (at >= 0) { // an empty file has no block
      marks.push({ at, src });
      end = at - 1;
    }
  }
  if (marks.length === 0) {
    return text;
  }
  let out = text;
  for (const { at, src } of marks) { // last first: earlier offsets stay valid
    out = `${out.slice(0, at)}${onReadMarker(fileName, src.matchedBy)}\n${out.slice(at)}`;
  }
  return marks[marks.length - 1].at > 0 ? `${START_MARKER}\n${out}` : out;
}
