/**
 * How notes read in the UI: the Notes view's rows, the prompts of "Create Note from Selection",
 * messages. Pure functions over the server's JSON (no VS Code import), unit-tested. The server
 * decides everything about notes; these only word what it returned.
 */

import { displayPath } from './labels';
import type { Note, NoteSummary, NotesPage, Scope } from './protocol';

export interface NoteGroups { project: NoteSummary[]; global: NoteSummary[] }

/** The notes of a page (or of several pages, in order) split by scope, keeping the server's order. */
export function groupNotes(notes: readonly NoteSummary[]): NoteGroups {
  return {
    project: notes.filter((n) => n.scope === 'project'),
    global: notes.filter((n) => n.scope === 'global'),
  };
}

export function notesScopeName(scope: Scope): string {
  return scope === 'global' ? 'global note' : 'project note';
}

/** Label and description of a scope's group row: "Project notes" · "3 · .memory-lens/notes". */
export function groupLabel(scope: Scope, count: number, page: Pick<NotesPage, 'directories' | 'projectRoot'>, home?: string):
  { label: string; description: string; tooltip: string } {
  const label = scope === 'global' ? 'Global notes' : 'Project notes';
  const dir = scope === 'global' ? page.directories.global : page.directories.project;
  const where = dir ? displayPath(dir, page.projectRoot, home) : 'no project here (no .git found above the file)';
  return { label, description: `${count} · ${where}`, tooltip: dir ? `${label} in ${dir}` : `${label}: ${where}` };
}

/** The grey text beside a note: its tags, and whether a project note of that name hides it. */
export function noteDescription(note: Pick<NoteSummary, 'tags' | 'shadowed'>): string {
  const parts = note.tags.length > 0 ? [note.tags.join(', ')] : [];
  if (note.shadowed) {
    parts.push('shadowed by the project note');
  }
  return parts.join(' · ');
}

/** "2025-10-08T03:07:11Z" → "2025-10-08 03:07 UTC" (the server's timestamps are UTC). */
export function formatUpdated(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/** The hover text of a note row. */
export function noteTooltip(note: NoteSummary, projectRoot: string | null, home?: string): string {
  const lines = [
    note.name,
    `${notesScopeName(note.scope)}${note.tags.length > 0 ? ` · tags: ${note.tags.join(', ')}` : ''}`,
  ];
  if (note.shadowed) {
    lines.push('A project note has the same name: reading this name without a scope gives the project one.');
  }
  if (note.snippet) {
    lines.push('', note.snippet);
  }
  lines.push('', `updated ${formatUpdated(note.updatedAt)} · ${displayPath(note.path, projectRoot, home)}`);
  return lines.join('\n');
}

/** Tags typed into the "tags" box: comma-separated, blanks dropped (the server checks the rest). */
export function parseTagsInput(text: string): string[] {
  return text.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/** Validation for the note name box: undefined when fine, else the message to show. */
export function validateNoteName(text: string): string | undefined {
  return text.trim() === '' ? 'Type a name for the note.' : undefined;
}

/** What the Notes view says above its rows. */
export function notesViewMessage(state: { query?: string; total: number; shown: number; error?: string }): string | undefined {
  if (state.error) {
    return state.error;
  }
  if (state.query !== undefined) {
    const found = state.total === 0 ? 'No notes match' : state.total === 1 ? '1 note matches' : `${state.total} notes match`;
    return `${found} "${state.query}" (best first). Clear the search to see every note.`;
  }
  if (state.total === 0) {
    return 'No notes yet. Select some text and run "Memory Lens: Create Note from Selection".';
  }
  return undefined;
}

/** The row that loads the next page: "Load 20 more (40 of 60 shown)". */
export function moreLabel(shown: number, total: number, pageSize: number): string {
  return `Load ${Math.min(pageSize, Math.max(0, total - shown))} more (${shown} of ${total} shown)`;
}

/** The confirmation after "Create Note from Selection". */
export function noteCreatedMessage(note: Pick<Note, 'name' | 'scope' | 'tags' | 'path'>, projectRoot: string | null | undefined,
  home?: string): string {
  const tags = note.tags.length > 0 ? ` with tags ${note.tags.join(', ')}` : '';
  return `Created the ${notesScopeName(note.scope)} "${note.name}"${tags} (${displayPath(note.path, projectRoot, home)}).`;
}

/** True when DATA (a server error's `data`) says the note changed since it was read. */
export function isConflictData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as { conflict?: unknown }).conflict === true;
}

/**
 * The server's string for a note document URI that VS Code hands back decoded (a tab restored
 * from an earlier session, a workspace symbol): VS Code decodes `%2F` in a name to `/` and cannot
 * tell it apart from a path separator again. Rebuilt per the documented form
 * `memory-lens-note:/<scope>/<name>.md?root=<project root>`, everything percent-encoded.
 */
export function noteUriFromParts(scheme: string, path: string, query: string): string {
  const m = /^\/([^/]+)\/(.+)\.md$/s.exec(path);
  const body = m ? `/${m[1]}/${encodeURIComponent(m[2])}.md` : path;
  const root = /^root=(.*)$/s.exec(query);
  const tail = root ? `?root=${encodeURIComponent(root[1])}` : (query ? `?${query}` : '');
  return `${scheme}:${body}${tail}`;
}
