import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entryLinks, sourceSections } from '../src/effectiveLinks';
import type { ListedEntry } from '../src/protocol';

const annotated = [
  '--- Context from: /h/g/GEMINI.md ---',
  '- My name is Alice.',
  '--- End of Context from: /h/g/GEMINI.md ---',
  '',
  '--- Context from: /p/GEMINI.md ---',
  '# Project notes',
  '',
  '- Use pnpm instead of npm.',
  '- Keep commits small.',
  '--- End of Context from: /p/GEMINI.md ---',
  '',
  '--- Context from: /p/app/GEMINI.md ---',
  '- Use pnpm instead of npm.',
  '--- End of Context from: /p/app/GEMINI.md ---',
];

function entry(path: string, line: number, text: string): ListedEntry {
  return { path, line, endLine: line, text, uri: `file://${path}`, scope: path.startsWith('/h/') ? 'global' : 'project' };
}

describe('annotated effective memory: source sections', () => {
  it('finds one section per source with the path on both markers', () => {
    assert.deepEqual(sourceSections(annotated), [
      { path: '/h/g/GEMINI.md', start: 0, end: 2, pathStart: 18, endPathStart: 25 },
      { path: '/p/GEMINI.md', start: 4, end: 9, pathStart: 18, endPathStart: 25 },
      { path: '/p/app/GEMINI.md', start: 11, end: 13, pathStart: 18, endPathStart: 25 },
    ]);
    assert.equal(annotated[4].slice(18, 18 + '/p/GEMINI.md'.length), '/p/GEMINI.md');
    assert.equal(annotated[9].slice(25, 25 + '/p/GEMINI.md'.length), '/p/GEMINI.md');
  });

  it('keeps a path with spaces and ends an unclosed section before the next one', () => {
    const lines = ['--- Context from: /a b/GEMINI.md ---', '- x', '--- Context from: /c/GEMINI.md ---', '- y'];
    assert.deepEqual(sourceSections(lines), [
      { path: '/a b/GEMINI.md', start: 0, end: 1, pathStart: 18 },
      { path: '/c/GEMINI.md', start: 2, end: 3, pathStart: 18 },
    ]);
  });

  it('finds nothing in the plain merged text', () => {
    assert.deepEqual(sourceSections(['- My name is Alice.', '', '# Project notes', '--- Context from: ---']), []);
  });
});

describe('annotated effective memory: entry links', () => {
  it('links each entry to its line in its own file, not to the same text in another file', () => {
    const entries = [
      entry('/p/app/GEMINI.md', 3, 'Use pnpm instead of npm.'),
      entry('/p/GEMINI.md', 4, 'Keep commits small.'),
      entry('/p/GEMINI.md', 3, 'Use pnpm instead of npm.'),
      entry('/h/g/GEMINI.md', 1, 'My name is Alice.'),
    ];
    assert.deepEqual(entryLinks(annotated, sourceSections(annotated), entries), [
      { line: 1, startChar: 2, endChar: 19, path: '/h/g/GEMINI.md', sourceLine: 1 },
      { line: 7, startChar: 2, endChar: 26, path: '/p/GEMINI.md', sourceLine: 3 },
      { line: 8, startChar: 2, endChar: 21, path: '/p/GEMINI.md', sourceLine: 4 },
      { line: 12, startChar: 2, endChar: 26, path: '/p/app/GEMINI.md', sourceLine: 3 },
    ]);
  });

  it('matches a multi-line entry by its first line and skips entries no longer in the text', () => {
    const lines = ['--- Context from: /p/GEMINI.md ---', '* First line', '  continued here', '1. Numbered', '--- End of Context from: /p/GEMINI.md ---'];
    const links = entryLinks(lines, sourceSections(lines), [
      entry('/p/GEMINI.md', 2, 'First line continued here'),
      entry('/p/GEMINI.md', 9, 'Gone since'),
      entry('/p/GEMINI.md', 4, 'Numbered'),
    ]);
    assert.deepEqual(links, [
      { line: 1, startChar: 2, endChar: 12, path: '/p/GEMINI.md', sourceLine: 2 },
      { line: 3, startChar: 3, endChar: 11, path: '/p/GEMINI.md', sourceLine: 4 },
    ]);
  });
});
