/**
 * Where the sources are in the annotated effective memory (Gemini CLI's `--- Context from: PATH ---`
 * blocks): one section per source, to fold and to link, and the line of each entry in its source
 * file, to link the entry to that line. Pure, unit-tested; effectiveDocument.ts turns these into
 * VS Code links and folding ranges.
 */

import type { ListedEntry } from './protocol';

export interface SourceSection {
  path: string;
  /** 0-based lines of the opening and the closing marker (the last line when there is none). */
  start: number;
  end: number;
  /** Character range of PATH on the opening marker line and, if there is one, on the closing line. */
  pathStart: number;
  endPathStart?: number;
}

export interface EntryLink {
  /** 0-based line in the document and the character range of the entry's text on it. */
  line: number;
  startChar: number;
  endChar: number;
  path: string;
  /** 1-based line of the entry in its source file. */
  sourceLine: number;
}

const OPEN = '--- Context from: ';
const CLOSE = '--- End of Context from: ';
const TAIL = ' ---';

function markerPath(line: string, head: string): string | undefined {
  return line.startsWith(head) && line.endsWith(TAIL) && line.length > head.length + TAIL.length
    ? line.slice(head.length, line.length - TAIL.length) : undefined;
}

/** The source sections of the annotated form, in document order. LINES: the document's lines. */
export function sourceSections(lines: readonly string[]): SourceSection[] {
  const out: SourceSection[] = [];
  for (let i = 0; i < lines.length; i++) {
    const path = markerPath(lines[i], OPEN);
    if (path === undefined) {
      continue;
    }
    let end = lines.length - 1;
    let closed = false;
    for (let j = i + 1; j < lines.length; j++) {
      if (markerPath(lines[j], CLOSE) === path) {
        end = j;
        closed = true;
        break;
      }
      if (markerPath(lines[j], OPEN) !== undefined) { // unclosed: the section stops before the next
        end = j - 1;
        break;
      }
    }
    out.push({ path, start: i, end, pathStart: OPEN.length, ...(closed ? { endPathStart: CLOSE.length } : {}) });
    i = end;
  }
  return out;
}

/** The list item text of LINE ("- foo" → start of "foo"), or -1 when LINE is not a list item. */
function itemStart(line: string): number {
  const m = /^(\s*)([-*+]|\d+[.)])\s+/.exec(line);
  return m ? m[0].length : -1;
}

/**
 * Each entry of ENTRIES (the server's `list` of the chain) found in its source's section of LINES:
 * the entry's first line, matched in file order after the previous match, as a list item.
 */
export function entryLinks(lines: readonly string[], sections: readonly SourceSection[], entries: readonly ListedEntry[]): EntryLink[] {
  const out: EntryLink[] = [];
  for (const section of sections) {
    const own = entries.filter((e) => e.path === section.path).sort((a, b) => a.line - b.line);
    let from = section.start + 1;
    for (const entry of own) {
      const first = entry.text.split('\n')[0].trim();
      if (first === '') {
        continue;
      }
      for (let i = from; i < section.end; i++) {
        const at = itemStart(lines[i]);
        const item = at >= 0 ? lines[i].slice(at).trimEnd() : '';
        // An entry over several lines may come back as one line of text: its first line is a prefix.
        if (item !== '' && (item === first || first.startsWith(item))) {
          out.push({ line: i, startChar: at, endChar: at + item.length, path: section.path, sourceLine: entry.line });
          from = i + 1;
          break;
        }
      }
    }
  }
  return out;
}
