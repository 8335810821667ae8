import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatUpdated, groupLabel, groupNotes, isConflictData, moreLabel, noteCreatedMessage, noteDescription, notesViewMessage,
  noteTooltip, noteUriFromParts, parseTagsInput, validateNoteName,
} from '../src/noteLabels';
import type { NoteSummary, NotesPage } from '../src/protocol';

const note = (over: Partial<NoteSummary>): NoteSummary => ({
  name: 'api_key_rotation', scope: 'project', tags: ['security', 'maintenance'], snippet: 'Rotate API keys every 90 days',
  createdAt: '2025-10-08T03:07:11Z', updatedAt: '2025-10-08T03:07:11Z', shadowed: false, revision: 'a8f9ccfe849c90b5',
  path: '/home/me/app/.memory-lens/notes/api_key_rotation.json',
  fileUri: 'file:///home/me/app/.memory-lens/notes/api_key_rotation.json',
  documentUri: 'memory-lens-note:/project/api_key_rotation.md?root=%2Fhome%2Fme%2Fapp', ...over,
});

const page: Pick<NotesPage, 'directories' | 'projectRoot'> = {
  projectRoot: '/home/me/app',
  directories: { project: '/home/me/app/.memory-lens/notes', global: '/home/me/.config/memory-lens/notes' },
};

describe('the Notes view rows', () => {
  it('groups notes by scope and keeps the server order within each', () => {
    const list = [note({ name: 'b' }), note({ name: 'g1', scope: 'global' }), note({ name: 'a' }), note({ name: 'g0', scope: 'global' })];
    const groups = groupNotes(list);
    assert.deepEqual(groups.project.map((n) => n.name), ['b', 'a']);
    assert.deepEqual(groups.global.map((n) => n.name), ['g1', 'g0']);
    assert.deepEqual(groupNotes([]), { project: [], global: [] });
  });

  it('labels each group with its count and directory', () => {
    assert.deepEqual(groupLabel('project', 3, page, '/home/me'),
      { label: 'Project notes', description: '3 · .memory-lens/notes', tooltip: 'Project notes in /home/me/app/.memory-lens/notes' });
    assert.equal(groupLabel('global', 1, page, '/home/me').description, '1 · ~/.config/memory-lens/notes');
    const outside = { projectRoot: null, directories: { global: '/g' } };
    assert.match(groupLabel('project', 0, outside).description, /^0 · no project here/);
  });

  it('shows the tags beside a note, and a shadowed global note as such', () => {
    assert.equal(noteDescription(note({})), 'security, maintenance');
    assert.equal(noteDescription(note({ tags: [] })), '');
    assert.equal(noteDescription(note({ tags: ['ops'], shadowed: true })), 'ops · shadowed by the project note');
    assert.equal(noteDescription(note({ tags: [], shadowed: true })), 'shadowed by the project note');
  });

  it('puts scope, tags, snippet, time and file in the tooltip', () => {
    const tip = noteTooltip(note({}), '/home/me/app', '/home/me').split('\n');
    assert.deepEqual(tip, [
      'api_key_rotation', 'project note · tags: security, maintenance', '', 'Rotate API keys every 90 days', '',
      'updated 2025-10-08 03:07 UTC · .memory-lens/notes/api_key_rotation.json',
    ]);
    const global = noteTooltip(note({ scope: 'global', tags: [], snippet: '', shadowed: true, path: '/home/me/n/x.json' }), null, '/home/me');
    assert.match(global, /^api_key_rotation\nglobal note\nA project note has the same name/);
    assert.match(global, /~\/n\/x\.json$/);
    assert.equal(formatUpdated('not a time'), 'not a time');
  });

  it('says what the view shows: nothing yet, search results, an error', () => {
    assert.match(notesViewMessage({ total: 0, shown: 0 }) ?? '', /No notes yet.*Create Note from Selection/);
    assert.equal(notesViewMessage({ total: 4, shown: 4 }), undefined);
    assert.equal(notesViewMessage({ query: 'deploy', total: 0, shown: 0 }),
      'No notes match "deploy" (best first). Clear the search to see every note.');
    assert.match(notesViewMessage({ query: 'deploy', total: 1, shown: 1 }) ?? '', /^1 note matches "deploy"/);
    assert.match(notesViewMessage({ query: 'x', total: 2, shown: 2 }) ?? '', /^2 notes match "x"/);
    assert.equal(notesViewMessage({ total: 3, shown: 0, error: 'the server stopped' }), 'the server stopped');
    assert.equal(moreLabel(100, 250, 100), 'Load 100 more (100 of 250 shown)');
    assert.equal(moreLabel(200, 250, 100), 'Load 50 more (200 of 250 shown)');
  });
});

describe('creating a note', () => {
  it('splits typed tags on commas and drops blanks', () => {
    assert.deepEqual(parseTagsInput(''), []);
    assert.deepEqual(parseTagsInput(' security , deploy,, ops  '), ['security', 'deploy', 'ops']);
    assert.deepEqual(parseTagsInput('日本, café'), ['日本', 'café']);
  });

  it('asks for a name that is not blank', () => {
    assert.equal(validateNoteName('Deploys'), undefined);
    assert.equal(validateNoteName('   '), 'Type a name for the note.');
  });

  it('confirms where the note went', () => {
    assert.equal(noteCreatedMessage(note({}), '/home/me/app', '/home/me'),
      'Created the project note "api_key_rotation" with tags security, maintenance (.memory-lens/notes/api_key_rotation.json).');
    assert.equal(noteCreatedMessage(note({ scope: 'global', tags: [], path: '/home/me/.config/memory-lens/notes/x.json' }), '/home/me/app', '/home/me'),
      'Created the global note "api_key_rotation" (~/.config/memory-lens/notes/x.json).');
  });
});

describe('note documents', () => {
  it('recognises a conflict in a server error', () => {
    assert.equal(isConflictData({ conflict: true, revision: 'abc' }), true);
    assert.equal(isConflictData({ conflict: false }), false);
    assert.equal(isConflictData(undefined), false);
    assert.equal(isConflictData('conflict'), false);
  });

  it('rebuilds the server URI of a note whose decoded name has a slash', () => {
    // VS Code hands back memory-lens-note:/project/Deploy%20%2F%20staging.md?root=… decoded.
    assert.equal(noteUriFromParts('memory-lens-note', '/project/Deploy / staging.md', 'root=/home/me/my app'),
      'memory-lens-note:/project/Deploy%20%2F%20staging.md?root=%2Fhome%2Fme%2Fmy%20app');
    assert.equal(noteUriFromParts('memory-lens-note', '/global/日本語メモ.md', ''),
      `memory-lens-note:/global/${encodeURIComponent('日本語メモ')}.md`);
    assert.equal(noteUriFromParts('memory-lens-note', '/global/100% & more.md', ''),
      'memory-lens-note:/global/100%25%20%26%20more.md');
    assert.equal(noteUriFromParts('memory-lens-note', '/odd', ''), 'memory-lens-note:/odd');
  });
});
