import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markOnRead, onReadMarker, START_MARKER } from '../src/onRead';

// Claude Code's text as the server joins it: one block per file, blank lines between, on-read blocks last.
const start = 'Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\nUse pnpm.';
const rule = 'Contents of /p/.claude/rules/ts.md:\n\n---\npaths: src/**/*.ts\n---\nStrict types.';
const sub = 'Contents of /p/src/CLAUDE.md:\n\nSrc notes.';
const sources = [
  { path: '/p/CLAUDE.md', when: 'start' as const, loaded: true },
  { path: '/p/src/CLAUDE.md', when: 'on-read' as const, loaded: true },
  { path: '/p/.claude/rules/ts.md', when: 'on-read' as const, loaded: true, matchedBy: 'src/**/*.ts' },
];

describe('the on-read part of the effective document', () => {
  it('marks what loads at start and each block that loads when Claude reads the file, with its glob', () => {
    const text = [start, sub, rule].join('\n\n');
    assert.equal(markOnRead(text, sources, 'app.ts'), [
      START_MARKER, start, '',
      '<!-- Memory Lens: loads when Claude reads app.ts, not at start -->', sub, '',
      '<!-- Memory Lens: loads when Claude reads app.ts (paths: src/**/*.ts), not at start -->', rule,
    ].join('\n'));
    assert.equal(onReadMarker('app.ts', 'src/**/*.ts'), '<!-- Memory Lens: loads when Claude reads app.ts (paths: src/**/*.ts), not at start -->');
  });
  it('leaves a text with nothing on read as the agent gets it', () => {
    assert.equal(markOnRead(start, sources.slice(0, 1), 'app.ts'), start);
    // Not loaded, or an empty file (no block): nothing to mark.
    assert.equal(markOnRead(start, [{ path: '/p/x.md', when: 'on-read', loaded: false }, sources[1]], 'app.ts'), start);
  });
  it('has no start marker when everything loads on read', () => {
    assert.equal(markOnRead(rule, sources.slice(2), 'app.ts'),
      `${onReadMarker('app.ts', 'src/**/*.ts')}\n${rule}`);
  });
  it('is not fooled by a start file that quotes an on-read header', () => {
    const quoting = `Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\nSee\n\n${rule.split('\n')[0]}\nabove.`;
    const text = [quoting, rule].join('\n\n');
    const marked = markOnRead(text, [sources[0], sources[2]], 'app.ts');
    assert.equal(marked.split(onReadMarker('app.ts', 'src/**/*.ts')).length, 2);
    assert.ok(marked.endsWith(`${onReadMarker('app.ts', 'src/**/*.ts')}\n${rule}`), marked);
  });
});
