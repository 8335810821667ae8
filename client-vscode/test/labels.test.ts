import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  agentLabel, displayPath, effectiveTitle, entriesOf, fromAgentView, parseAgent, entryLabel, formatTokens, savedMessage, serverLogLine, skippedImports, sourceLabel,
  statusBarText, statusBarTooltip, stripMemoryPrefix, summary, validateMemoryText,
} from '../src/labels';
import type { EffectiveMemory, ListedEntry, MemoryImport, MemorySource } from '../src/protocol';

const source = (over: Partial<MemorySource>): MemorySource => ({
  uri: 'file:///p/GEMINI.md', path: '/p/GEMINI.md', scope: 'project', readable: true, bytes: 40, tokens: 10,
  dirty: false, reason: '', ...over,
});

const memory: EffectiveMemory = {
  text: 'x', projectRoot: '/p', tokens: 1234, targetDir: '/p/app',
  sources: [
    source({ uri: 'file:///home/u/.gemini/GEMINI.md', path: '/home/u/.gemini/GEMINI.md', scope: 'global', tokens: 5 }),
    source({}),
    source({ uri: 'file:///p/app/GEMINI.md', path: '/p/app/GEMINI.md', readable: false, tokens: 0, reason: 'is not valid UTF-8' }),
  ],
};

describe('token and file counts', () => {
  it('formats tokens with a tilde, singular and thousands', () => {
    assert.equal(formatTokens(1), '~1 token');
    assert.equal(formatTokens(312), '~312 tokens');
    assert.equal(formatTokens(12_345), '~12.3k tokens');
    assert.equal(formatTokens(20_000), '~20k tokens');
  });
  it('summarises files and tokens for the status bar', () => {
    // Files count as the server's code lens counts them: those that contribute text.
    assert.equal(summary(memory), '2 files · ~1234 tokens · 1 unreadable');
    assert.equal(summary({ sources: [memory.sources[0]], tokens: 5 }), '1 file · ~5 tokens');
    assert.equal(summary({ sources: [memory.sources[0], source({ tokens: 0, bytes: 2 })], tokens: 5 }), '1 file · ~5 tokens');
    assert.equal(statusBarText(memory), '$(book) 2 files · ~1234 tokens · 1 unreadable');
    assert.equal(statusBarText(undefined), '$(book) Memory');
  });
  it('lists every source in the tooltip, unreadable ones with the reason', () => {
    const tip = statusBarTooltip(memory, '/home/u');
    assert.match(tip, /global · ~\/\.gemini\/GEMINI\.md · ~5 tokens/);
    assert.match(tip, /project · app\/GEMINI\.md · unreadable: is not valid UTF-8/);
    assert.match(tip, /Click to show the effective memory/);
  });
});

describe('paths and panel labels', () => {
  it('shows paths relative to the project root, then home, else as given', () => {
    assert.equal(displayPath('/p/a/GEMINI.md', '/p', '/home/u'), 'a/GEMINI.md');
    assert.equal(displayPath('/home/u/.gemini/GEMINI.md', '/p', '/home/u'), '~/.gemini/GEMINI.md');
    assert.equal(displayPath('/etc/GEMINI.md', null, '/home/u'), '/etc/GEMINI.md');
    assert.equal(displayPath('/pp/GEMINI.md', '/p'), '/pp/GEMINI.md');
    assert.equal(displayPath('C:\\p\\a\\GEMINI.md', 'C:\\p'), 'a/GEMINI.md');
  });
  it('describes sources with scope, tokens, unreadable and unsaved marks', () => {
    assert.deepEqual(sourceLabel(memory.sources[1], '/p').description, 'project · ~10 tokens');
    assert.equal(sourceLabel(memory.sources[2], '/p').description, 'project · unreadable: is not valid UTF-8');
    assert.match(sourceLabel(source({ dirty: true }), '/p').description, /unsaved edits/);
    assert.match(sourceLabel(memory.sources[0], '/p', '/home/u').tooltip, /^\/home\/u\/\.gemini\/GEMINI\.md\nglobal memory · 40 bytes/);
  });
  it('labels entries by their first line, shortened', () => {
    assert.equal(entryLabel('Use pnpm\n  not npm'), 'Use pnpm');
    assert.equal(entryLabel('- a   b'), 'a b');
    const long = entryLabel('x'.repeat(200), 10);
    assert.equal(long.length, 10);
    assert.ok(long.endsWith('…'));
  });
  it('picks the entries of one file in line order', () => {
    const e = (path: string, line: number): ListedEntry => ({ text: 't', path, uri: `file://${path}`, line, endLine: line, scope: 'project' });
    assert.deepEqual(entriesOf([e('/a', 5), e('/b', 1), e('/a', 2)], '/a').map((x) => x.line), [2, 5]);
  });
  it('names the effective memory document after its agent and its file', () => {
    assert.equal(effectiveTitle('notes.md', false), 'Gemini CLI memory (notes.md).md');
    assert.equal(effectiveTitle('a/b?c', true), 'Gemini CLI memory (a_b_c) annotated.md');
    assert.equal(effectiveTitle('', false), 'Gemini CLI memory (workspace).md');
    assert.equal(effectiveTitle('x.py', false, 'Claude Code'), 'Claude Code memory (x.py).md');
  });
  it('lists the imports the agent does not load, nested ones too, in the tooltips', () => {
    const imp = (target: string, line: number, status: string, message: string, children: MemoryImport[] = []): MemoryImport =>
      ({ file: '/p/GEMINI.md', line, target, status, path: `/p/${target}`, message, children });
    const src = source({ imports: [
      imp('ok.md', 2, 'imported', '', [imp('gone.md', 1, 'not-found', 'Import failed: gone.md')]),
      imp('../../etc/x.md', 5, 'outside-root', 'outside the project'),
    ] });
    assert.deepEqual(skippedImports(src), [
      '@gone.md (line 1): not-found: Import failed: gone.md',
      '@../../etc/x.md (line 5): outside-root: outside the project',
    ]);
    assert.deepEqual(skippedImports(source({})), []);
    assert.match(sourceLabel(src, '/p').tooltip, /\nnot loaded: @gone\.md \(line 1\): not-found/);
    const tip = statusBarTooltip({ ...memory, sources: [src] }, '/home/u');
    assert.match(tip, /project · GEMINI\.md · ~10 tokens\n {4}not loaded: @gone\.md/);
  });
});

describe('the # quick memory', () => {
  it('drops a leading # and list markers for display, like the server does when saving', () => {
    assert.equal(stripMemoryPrefix('# Use pnpm'), 'Use pnpm');
    assert.equal(stripMemoryPrefix('  ## - Use pnpm  '), 'Use pnpm');
    assert.equal(stripMemoryPrefix('#Use pnpm'), 'Use pnpm');
    assert.equal(stripMemoryPrefix('C# is fine'), 'C# is fine');
    assert.equal(stripMemoryPrefix('-1 is a number'), '-1 is a number');
    assert.equal(stripMemoryPrefix('* + x'), 'x');
    assert.equal(stripMemoryPrefix('#- x'), 'x');
  });
  it('refuses text that is empty once cleaned', () => {
    assert.ok(validateMemoryText('#  '));
    assert.ok(validateMemoryText(' - '));
    assert.ok(validateMemoryText('## # '));
    assert.equal(validateMemoryText('# ok'), undefined);
  });
  it('confirms a save, or says nothing was written', () => {
    const saved = { path: '/p/GEMINI.md', uri: 'file:///p/GEMINI.md', scope: 'project' as const, text: 'Use pnpm', line: 4, added: true, created: true };
    assert.equal(savedMessage(saved, '/p'), 'Saved to project memory: GEMINI.md:4 (file created) — "Use pnpm"');
    assert.equal(savedMessage({ ...saved, added: false, created: false, scope: 'global', path: '/home/u/.gemini/GEMINI.md' }, '/p', '/home/u'),
      'Already in global memory (~/.gemini/GEMINI.md:4); nothing written.');
  });
});

describe('server log lines', () => {
  it("keeps the server's own level", () => {
    assert.deepEqual(serverLogLine('memory-lens: INFO: polling instead'), { level: 'info', message: '[server] polling instead' });
    assert.deepEqual(serverLogLine('memory-lens: DEBUG: scan done'), { level: 'debug', message: '[server] scan done' });
    assert.deepEqual(serverLogLine('memory-lens: WARNING: x: y'), { level: 'warn', message: '[server] x: y' });
    assert.deepEqual(serverLogLine('memory-lens: ERROR: boom'), { level: 'error', message: '[server] boom' });
  });
  it('takes other lines (a traceback, Python itself) as errors', () => {
    assert.deepEqual(serverLogLine('Traceback (most recent call last):'),
      { level: 'error', message: '[server] Traceback (most recent call last):' });
    assert.deepEqual(serverLogLine('memory-lens: NOTE: x').level, 'error');
  });
});

describe('agent views', () => {
  const codexView = fromAgentView({
    agent: 'codex', text: '# Codex rules', projectRoot: '/p', targetDir: '/p/app', tokens: 8, warnings: [],
    sources: [
      { uri: 'file:///h/.codex/AGENTS.md', path: '/h/.codex/AGENTS.md', tier: 'user', bytes: 12, loaded: true, dirty: false },
      { uri: 'file:///p/AGENTS.md', path: '/p/AGENTS.md', tier: 'project', bytes: 40000, loaded: true, cutAt: 32768, dirty: false },
      { uri: 'file:///p/app/AGENTS.md', path: '/p/app/AGENTS.md', tier: 'project', bytes: 9, loaded: false, reason: 'over the budget', dirty: false },
    ],
  });
  it('reads user tiers as global and the others as project, keeping tier, loaded and cutAt', () => {
    assert.deepEqual(codexView.sources.map((s) => [s.scope, s.tier, s.loaded, s.cutAt]),
      [['global', 'user', true, undefined], ['project', 'project', true, 32768], ['project', 'project', false, undefined]]);
    assert.equal(codexView.agent, 'codex');
  });
  it('counts the files the agent loads and names the agent in the status bar', () => {
    assert.equal(summary(codexView), '2 files · ~8 tokens');
    assert.equal(statusBarText(codexView, 'codex'), '$(book) Codex · 2 files · ~8 tokens');
    assert.equal(statusBarText(memory, 'gemini'), '$(book) Gemini CLI · 2 files · ~1234 tokens · 1 unreadable');
    assert.equal(statusBarText(undefined, 'claude'), '$(book) Claude Code · Memory');
  });
  it('shows the tier, the bytes, where a file is cut and why one is not loaded', () => {
    assert.equal(sourceLabel(codexView.sources[1], '/p', '/h').description, 'project · 40000 bytes, cut at byte 32768');
    assert.equal(sourceLabel(codexView.sources[2], '/p', '/h').description, 'project · not loaded: over the budget');
    assert.equal(sourceLabel(codexView.sources[0], '/p', '/h').label, '~/.codex/AGENTS.md');
    assert.equal(sourceLabel(codexView.sources[0], '/p', '/h').tooltip, '/h/.codex/AGENTS.md\nuser memory · 12 bytes');
    assert.match(statusBarTooltip(codexView, '/h'), /^user · ~\/\.codex\/AGENTS\.md · 12 bytes$/m);
  });
  it('parses the setting, anything unknown being gemini', () => {
    assert.equal(parseAgent('codex'), 'codex');
    assert.equal(parseAgent('CODEX'), 'gemini');
    assert.equal(parseAgent(undefined), 'gemini');
    assert.equal(parseAgent('toString'), 'gemini');
    assert.equal(effectiveTitle('notes.md', false, agentLabel('codex')), 'Codex memory (notes.md).md');
  });
  it('names an agent the client does not know as the server does', () => {
    assert.equal(agentLabel('claude'), 'Claude Code');
    assert.equal(agentLabel('copilot-vscode'), 'Copilot Chat');
    assert.equal(agentLabel('copilot-jetbrains'), 'copilot-jetbrains');
    assert.equal(agentLabel('toString'), 'toString');
  });
});

describe('Claude Code: what loads at start and what loads when Claude reads the file', () => {
  const claudeView = fromAgentView({
    agent: 'claude', text: 'x', projectRoot: '/p', targetDir: '/p/src', tokens: 1, warnings: [],
    sources: [
      { uri: 'file:///p/CLAUDE.md', path: '/p/CLAUDE.md', tier: 'project', bytes: 10, loaded: true, when: 'start' },
      { uri: 'file:///p/.claude/rules/ts.md', path: '/p/.claude/rules/ts.md', tier: 'project', bytes: 30, loaded: true,
        when: 'on-read', matchedBy: 'src/**/*.ts' },
      { uri: 'file:///p/src/CLAUDE.md', path: '/p/src/CLAUDE.md', tier: 'project', bytes: 5, loaded: true, when: 'on-read' },
      { uri: 'file:///p/.claude/rules/py.md', path: '/p/.claude/rules/py.md', tier: 'project', bytes: 7, loaded: false,
        when: 'on-read', reason: 'paths: **/*.py does not match app.ts' },
    ],
  });
  it('keeps when and matchedBy from the server', () => {
    assert.deepEqual(claudeView.sources.map((s) => [s.when, s.matchedBy]),
      [['start', undefined], ['on-read', 'src/**/*.ts'], ['on-read', undefined], ['on-read', undefined]]);
  });
  it('marks the on-read files in the panel and the status bar tooltip, with the glob that matched', () => {
    assert.equal(sourceLabel(claudeView.sources[0], '/p').description, 'project · 10 bytes');
    assert.equal(sourceLabel(claudeView.sources[1], '/p').description, 'project · on read (src/**/*.ts) · 30 bytes');
    assert.equal(sourceLabel(claudeView.sources[2], '/p').description, 'project · on read · 5 bytes');
    assert.match(sourceLabel(claudeView.sources[1], '/p').tooltip,
      /^Loads when Claude reads the open file, not at start \(its paths: glob src\/\*\*\/\*\.ts matches it\)$/m);
    assert.doesNotMatch(sourceLabel(claudeView.sources[0], '/p').tooltip, /Loads when/);
    // A rule whose paths: do not match the file is not on read: it is not loaded, and says why.
    assert.equal(sourceLabel(claudeView.sources[3], '/p').description, 'project · not loaded: paths: **/*.py does not match app.ts');
    assert.doesNotMatch(sourceLabel(claudeView.sources[3], '/p').tooltip, /Loads when/);
    assert.match(statusBarTooltip(claudeView), /^project · \.claude\/rules\/ts\.md · on read \(src\/\*\*\/\*\.ts\) · 30 bytes$/m);
  });
});
