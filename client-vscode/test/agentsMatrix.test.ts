import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  agentRows, agentsLoading, agentsStatusText, agentsStatusTooltip, explainErrorMessage, METHOD_NOT_FOUND, parseExplain, statusWords,
} from '../src/agentsMatrix';
import type { ExplainResult } from '../src/protocol';

// A matrix as `memory-lens explain /p/src/app.ts --format json` gives it (docs/lsp.md, memory/explain).
const matrix: ExplainResult = {
  path: '/p/src/app.ts',
  agents: ['gemini', 'claude', 'codex', 'acme', 'cursor-next'],
  files: [
    { path: '/home/u/.gemini/GEMINI.md', uri: 'file:///home/u/.gemini/GEMINI.md', statuses: { gemini: { status: 'loaded' } } },
    {
      path: '/p/AGENTS.md', statuses: {
        codex: { status: 'not-loaded', reason: 'Codex reads AGENTS.override.md in this directory instead' },
        claude: { status: 'not-loaded', reason: 'Claude Code: this project has a CLAUDE.md, so AGENTS.md is off' },
      },
    },
    { path: '/p/AGENTS.override.md', statuses: { codex: { status: 'loaded', cutAt: 32768 } } },
    { path: '/p/CLAUDE.md', statuses: { claude: { status: 'loaded' } } },
    { path: '/p/.claude/rules/ts.md', statuses: { claude: { status: 'on-read', matchedBy: 'src/**/*.ts' } } },
    {
      path: '/p/.github/instructions/x.instructions.md', statuses: {
        acme: { status: 'requestable', matchedBy: 'src/**/*.ts' },
        'cursor-next': { status: 'surprise' },
      },
    },
  ],
};

describe('the Agents view rows', () => {
  const rows = agentRows(matrix, '/p', '/home/u');
  it('lists every agent in the server\'s order, known names labelled, unknown ones as sent', () => {
    assert.deepEqual(rows.map((r) => r.label), ['Gemini CLI', 'Claude Code', 'Codex', 'acme', 'cursor-next']);
  });
  it('gives each agent its files in load order, with a status icon and words', () => {
    const claude = rows[1];
    assert.deepEqual(claude.files.map((f) => [f.label, f.description, f.icon]), [
      ['AGENTS.md', 'not loaded', 'circle-slash'],
      ['CLAUDE.md', 'loaded', 'pass'],
      ['.claude/rules/ts.md', 'on read · src/**/*.ts', 'eye'],
    ]);
    assert.equal(claude.description, '1 not loaded · 1 loaded · 1 on read');
    assert.equal(rows[0].files[0].label, '~/.gemini/GEMINI.md');
    assert.equal(rows[0].files[0].uri, 'file:///home/u/.gemini/GEMINI.md');
    assert.equal(rows[1].files[0].uri, undefined);
    assert.deepEqual(rows[2].files.map((f) => f.description), ['not loaded', 'loaded · cut at byte 32768']);
  });
  it('puts the reason and the glob on hover', () => {
    assert.match(rows[2].files[0].tooltip, /^\/p\/AGENTS\.md\nCodex: not loaded\nCodex reads AGENTS\.override\.md in this directory instead$/);
    assert.match(rows[1].files[2].tooltip, /Loads when Claude Code reads app\.ts \(matched by src\/\*\*\/\*\.ts\)/);
  });
  it('shows a status the client does not know as sent', () => {
    assert.deepEqual(rows[4].files.map((f) => [f.description, f.icon]), [['surprise', 'circle-outline']]);
    assert.equal(statusWords({ status: 'requestable', matchedBy: 'src/**/*.ts' }), 'requestable · src/**/*.ts');
  });
  it('says which agents load nothing', () => {
    assert.deepEqual(rows.map((r) => r.loadsSomething), [true, true, true, false, false]);
    assert.match(rows[3].tooltip, /loads nothing; 1 requestable/);
    assert.equal(agentRows({ path: '/p/a.py', agents: ['wave'], files: [] })[0].description, 'no instruction files');
  });
});

describe('the agents status bar item', () => {
  it('counts the agents that load something (at start or on read) for the file', () => {
    assert.deepEqual(agentsLoading(matrix), ['gemini', 'claude', 'codex']);
    assert.equal(agentsStatusText(matrix), '$(organization) 3 agents');
    assert.equal(agentsStatusText({ ...matrix, agents: ['gemini'] }), '$(organization) 1 agent');
    assert.equal(agentsStatusText({ ...matrix, files: [] }), '$(organization) 0 agents');
  });
  it('names them in the tooltip', () => {
    assert.equal(agentsStatusTooltip(matrix), '3 of 5 agents load instructions for app.ts: Gemini CLI, Claude Code, Codex\n'
      + 'Nothing loaded by acme, cursor-next\nClick to show the Agents view.');
  });
  it('claude on read for app.ts but not for a file its paths: glob misses', () => {
    const py: ExplainResult = { path: '/p/tool.py', agents: ['claude'], files: [
      { path: '/p/.claude/rules/ts.md', statuses: { claude: { status: 'not-loaded', reason: 'paths: src/**/*.ts does not match tool.py' } } },
    ] };
    assert.equal(agentsStatusText(py), '$(organization) 0 agents');
    assert.deepEqual(agentRows(py)[0].files.map((f) => f.description), ['not loaded']);
  });
});

describe('memory/explain failures', () => {
  it('checks the answer\'s shape', () => {
    assert.equal(parseExplain(matrix), matrix);
    for (const bad of [null, 'x', {}, { path: '/p', agents: 'claude', files: [] }, { path: '/p', agents: [1], files: [] },
      { path: '/p', agents: [], files: [{ path: '/p/a' }] }]) {
      assert.throws(() => parseExplain(bad), /not the \{path, agents, files\} matrix/);
    }
  });
  it('says in one line what is wrong', () => {
    assert.match(explainErrorMessage(METHOD_NOT_FOUND, 'Unhandled method memory/explain', '/p/a.ts'),
      /^This Memory Lens server does not answer memory\/explain: update memory-lens/);
    assert.equal(explainErrorMessage(-32603, 'boom\nTraceback', '/p/src/a.ts'), 'Could not tell which agents read what for a.ts: boom');
  });
});
