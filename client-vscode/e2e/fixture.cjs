// The end-to-end test's world: a git project with nested GEMINI.md files, other agents' scoped
// instruction files, an isolated global
// memory directory, and the VS Code settings (user and Remote) that point Memory Lens at it.
// `node fixture.cjs RUN_DIR [serverCommandJson]` creates it; drive.cjs imports the names below.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const FILES = {
  'GEMINI.md': '# Project notes\n\n- Use pnpm instead of npm.\n- Keep commits small.\n',
  'packages/app/GEMINI.md': '# App\n\n- Run the app with `pnpm dev`.\n- Tests live in tests/.\n- Use pnpm instead of npm.\n',
  'packages/app/src/notes.md': 'Deploys go through the staging cluster first.\n\nSome other notes.\n\nAsk before force-pushing to main.\n',
  'README.md': '# Demo project\n',
  'packages/legacy/notes.md': 'Legacy notes.\n',
  // An @import Gemini CLI expands in place; and the file Codex loads instead (its view, from the agent picker).
  'packages/imp/GEMINI.md': '# Imports\n\n@./shared-rules.md\n',
  'packages/imp/shared-rules.md': '- Imported rule: lint before every commit.\n',
  'AGENTS.md': '# Codex instructions\n\n- Codex rule: run make check before pushing.\n',
  // Instructions scoped to some files: for a .ts file, not for a .py one (the Agents view, Claude's on-read part).
  '.claude/rules/ts.md': '---\npaths:\n  - "**/*.ts"\n---\n- TypeScript rule: strict types everywhere.\n',
  '.github/instructions/ts.instructions.md': '---\napplyTo: "**/*.ts"\n---\n- Copilot TypeScript rule: no any.\n',
  '.cursor/rules/ts.mdc': '---\ndescription: TypeScript files\nglobs: **/*.ts\nalwaysApply: false\n---\n- Cursor TypeScript rule: prefer const.\n',
  'packages/web/AGENTS.md': '- Web rule Codex skips for the override.\n',
  'packages/web/AGENTS.override.md': '- Web override rule: Codex reads this instead.\n',
  'packages/web/src/app.ts': 'export const app = 1;\n',
  'packages/web/src/tool.py': 'print("tool")\n',
};
/** Not UTF-8: loaded as Gemini CLI loads it (bad bytes read as U+FFFD), with an encoding warning. */
const UNREADABLE = { 'packages/legacy/GEMINI.md': Buffer.from([0x2d, 0x20, 0x4f, 0x6c, 0x64, 0x20, 0xff, 0xfe, 0x0a]) };
const GLOBAL = '## Gemini Added Memories\n- My name is Alice.\n';

function layout(run) {
  const home = path.join(run, 'home');
  return {
    run,
    home,
    workspace: path.join(run, 'workspace'),
    globalDir: path.join(home, 'memory-global'),
    globalFile: path.join(home, 'memory-global', 'GEMINI.md'),
    userData: path.join(run, 'user-data'),
    extensions: path.join(run, 'extensions'),
    tmp: path.join(run, 'tmp'),
    profile: path.join(run, 'chromium-profile'),
  };
}

function create(run, serverCommand) {
  const l = layout(run);
  fs.rmSync(run, { recursive: true, force: true });
  for (const dir of [l.workspace, l.globalDir, l.userData, l.extensions, l.tmp, path.join(l.tmp, 'run')]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  fs.chmodSync(path.join(l.tmp, 'run'), 0o700);
  for (const [rel, text] of Object.entries({ ...FILES, ...UNREADABLE })) {
    fs.mkdirSync(path.dirname(path.join(l.workspace, rel)), { recursive: true });
    fs.writeFileSync(path.join(l.workspace, rel), text);
  }
  fs.writeFileSync(l.globalFile, GLOBAL);
  // A .git marker makes the workspace a project (project memory goes to its root).
  execFileSync('git', ['init', '-q', l.workspace], { env: { ...process.env, HOME: l.home } });
  const settings = {
    'memoryLens.globalDir': l.globalDir,
    'memoryLens.trace.server': 'messages',
    ...(serverCommand ? { 'memoryLens.server.command': serverCommand } : {}),
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'git.enabled': false,
    'chat.commandCenter.enabled': false,
    'editor.lightbulb.enabled': 'on',
    'editor.hover.delay': 200,
    'editor.minimap.enabled': false,
    'files.autoSave': 'off',
    'files.refactoring.autoSave': true,
    'explorer.autoReveal': false,
    'window.restoreWindows': 'none',
  };
  // code-server is a remote window: VS Code applies the `machine` and `machine-overridable` settings
  // (memoryLens.globalDir, memoryLens.server.command) only from the Remote settings,
  // USER_DATA/Machine/settings.json. From the user settings file they are dropped as soon as VS Code
  // reads that file again with the extension's settings known (after any write to it, e.g. the agent
  // picker's memoryLens.agent), so a later server restart would come up without them.
  const remote = Object.fromEntries(Object.entries(settings).filter(([key]) => MACHINE_SCOPES.has(settingScope(key))));
  const user = Object.fromEntries(Object.entries(settings).filter(([key]) => !(key in remote)));
  for (const [dir, values] of [['User', user], ['Machine', remote]]) {
    fs.mkdirSync(path.join(l.userData, dir), { recursive: true });
    fs.writeFileSync(path.join(l.userData, dir, 'settings.json'), JSON.stringify(values, null, 2));
  }
  return l;
}

const MACHINE_SCOPES = new Set(['machine', 'machine-overridable']);

/** The scope the extension's package.json declares for the setting KEY (undefined: not the extension's, or window). */
function settingScope(key) {
  const { contributes } = require('../package.json');
  const sections = Array.isArray(contributes.configuration) ? contributes.configuration : [contributes.configuration];
  return sections.map((section) => section.properties?.[key]?.scope).find((scope) => scope !== undefined);
}

module.exports = { FILES, GLOBAL, layout, create };

if (require.main === module) {
  const [run, command] = process.argv.slice(2);
  if (!run) {
    console.error('usage: node fixture.cjs RUN_DIR [serverCommandJson]');
    process.exit(2);
  }
  const l = create(path.resolve(run), command ? JSON.parse(command) : undefined);
  console.log(`fixture: workspace ${l.workspace}, global memory ${l.globalDir}`);
}
