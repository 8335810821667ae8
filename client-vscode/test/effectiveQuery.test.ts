import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatEffectiveQuery, globalMemoryPath, parseEffectiveQuery } from '../src/effectiveQuery';

describe('effective memory document query', () => {
  it('round-trips the target and the annotated flag', () => {
    for (const doc of [
      { target: 'file:///p/a%20b/GEMINI.md', annotated: false },
      { target: 'untitled:Untitled-1', annotated: true },
      { target: 'file:///p/x?y&z=1#frag', annotated: true },
    ]) {
      assert.deepEqual(parseEffectiveQuery(formatEffectiveQuery(doc)), doc);
    }
  });
  it('names an agent other than gemini, and only then', () => {
    const codex = { target: 'file:///p/GEMINI.md', annotated: false, agent: 'codex' as const };
    assert.equal(formatEffectiveQuery(codex), 'target=file%3A%2F%2F%2Fp%2FGEMINI.md&agent=codex');
    assert.deepEqual(parseEffectiveQuery(formatEffectiveQuery(codex)), codex);
    assert.equal(formatEffectiveQuery({ ...codex, agent: 'gemini' }), 'target=file%3A%2F%2F%2Fp%2FGEMINI.md');
    assert.deepEqual(parseEffectiveQuery('target=x&agent=nobody'), { target: 'x', annotated: false, agent: 'gemini' });
  });
  it('rejects a query without a target', () => {
    assert.equal(parseEffectiveQuery(''), undefined);
    assert.equal(parseEffectiveQuery('annotated=1'), undefined);
  });
});

describe('globalMemoryPath', () => {
  it('follows the setting, then MEMORY_LENS_GLOBAL_DIR, then ~/.gemini', () => {
    assert.equal(globalMemoryPath('/g', { MEMORY_LENS_GLOBAL_DIR: '/e' }, '/h', ['A.md', 'B.md']), '/g/A.md');
    assert.equal(globalMemoryPath(null, { MEMORY_LENS_GLOBAL_DIR: ' /e ' }, '/h', ['A.md']), '/e/A.md');
    assert.equal(globalMemoryPath('', {}, '/h', []), '/h/.gemini/GEMINI.md');
    assert.equal(globalMemoryPath('~/mem/', {}, '/h', ['GEMINI.md']), '/h/mem/GEMINI.md');
  });
});
