// Drives code-server (VS Code 1.100) in headless Chromium through playwright-core and checks the
// Memory Lens extension end to end. Started by run.sh, which prepares everything.
// Usage: node drive.cjs BASE_URL   (env: E2E_RUN, E2E_ARTIFACTS, E2E_SERVER, CHROMIUM, NODE_PATH)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { layout } = require('./fixture.cjs');

const base = process.argv[2] || 'http://127.0.0.1:18123';
const world = layout(process.env.E2E_RUN || '/tmp/memory-lens-e2e/run');
const out = process.env.E2E_ARTIFACTS || path.resolve(__dirname, '..', '..', 'test-artifacts', 'vscode');
const ws = (rel) => path.join(world.workspace, rel);
const read = (file) => fs.readFileSync(file, 'utf8');
const t0 = Date.now();
const result = { ok: false, steps: [], screenshots: [], checks: {} };

function step(name) {
  const ms = Date.now() - t0;
  result.steps.push({ name, ms });
  console.log(`[${(ms / 1000).toFixed(1)}s] ${name}`);
}

function check(name, condition, detail) {
  result.checks[name] = condition ? 'ok' : `FAILED ${detail ?? ''}`.trim();
  if (!condition) {
    throw new Error(`check failed: ${name}${detail ? `: ${detail}` : ''}`);
  }
}

/** Poll PREDICATE (sync or async) until it is truthy; throw naming WHAT on timeout. */
async function until(what, predicate, timeout = 20000) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await predicate();
      if (last) {
        return last;
      }
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(page) {
  let shot = 0;
  const screenshot = async (name) => {
    const file = `${String(++shot).padStart(2, '0')}-${name}.png`;
    await page.waitForTimeout(300); // let animations settle
    await page.screenshot({ path: path.join(out, file) });
    result.screenshots.push(file);
  };
  const text = (locator) => locator.innerText().then((s) => s.replace(/\u00a0/g, ' '));
  const activeEditorLines = () => page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
  const statusItem = page.locator('.statusbar-item', { hasText: /\d+ files? · ~\d+ tokens?/ });
  // Pane headers are labelled "<name>[ - <description>] Section".
  const panel = page.locator('.pane:has(> .pane-header[aria-label^="Memory"]:not([aria-label^="Memory Notes"]))');
  const notesPane = page.locator('.pane:has(> .pane-header[aria-label^="Memory Notes"])');
  const notesRow = (label) => notesPane.locator('.monaco-list-row', { hasText: label });
  /** The rows of the notes view as "label — description" (or "label"), top to bottom. */
  const notesLabels = () => notesPane.locator('.monaco-list-row').evaluateAll((rows) => rows
    .sort((a, b) => (parseFloat(a.style.top) || 0) - (parseFloat(b.style.top) || 0))
    .map((r) => {
      const name = (r.querySelector('.label-name')?.textContent ?? '').trim();
      const description = (r.querySelector('.label-description')?.textContent ?? '').trim();
      return description ? `${name} — ${description}` : name;
    }));
  const panelRow = (label) => panel.locator('.monaco-list-row', { hasText: label });
  const notification = (label) => page.locator('.notifications-toasts .notification-toast', { hasText: label });

  const focusEditorArea = async () => {
    await page.mouse.move(1000, 450); // away from tabs and breadcrumbs, whose hovers block clicks
    await page.keyboard.press('Escape');
  };
  /** Open the command palette and type TEXT (no Escape first with KEEPSELECTION: it would drop the selection). */
  const openPalette = async (typed, keepSelection = false) => {
    if (keepSelection) {
      await page.mouse.move(1000, 450);
    } else {
      await focusEditorArea();
    }
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15000 });
    await input.fill(`>${typed}`);
  };
  const palette = async (command, { keepSelection = false, shot } = {}) => {
    await openPalette(command, keepSelection);
    // Click the row whose label is exactly COMMAND (fuzzy matching may rank others first).
    const exact = new RegExp(`^${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    const row = page.locator('.quick-input-list .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: exact }) }).first();
    await row.waitFor({ timeout: 15000 });
    if (shot) {
      await screenshot(shot);
    }
    await row.click();
  };
  const openFile = async (rel) => {
    await focusEditorArea();
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15000 });
    await input.fill(rel);
    await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: path.basename(rel) })
      .filter({ hasText: path.dirname(rel) === '.' ? '' : path.dirname(rel) }).first().waitFor({ timeout: 60000 }); // first search indexes
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: path.basename(rel) }).first().waitFor({ timeout: 15000 });
    await activeEditorLines().waitFor({ timeout: 15000 });
  };
  const editorLine = (n) => page.locator('.editor-group-container.active .monaco-editor .view-line').nth(n);
  /** Rest the mouse on TARGET (at fraction X of its width) until HOVER shows; editors re-render. */
  const hoverUntil = (target, hover, x) => until(`hover over ${target}`, async () => {
    const box = await target.boundingBox();
    if (!box) {
      return false;
    }
    await page.mouse.move(box.x + box.width * x, box.y + box.height / 2);
    await page.mouse.move(box.x + box.width * x + 3, box.y + box.height / 2);
    return hover.waitFor({ state: 'visible', timeout: 4000 }).then(() => true, () => false);
  }, 30000);
  /** Right-click ROW and choose LABEL from its context menu (BEFORE runs while the menu is open). */
  const contextMenu = async (row, label, before) => {
    await row.click({ button: 'right' });
    const item = page.locator('.context-view .action-label', { hasText: label }).first();
    await item.waitFor({ timeout: 10000 });
    await page.waitForTimeout(300); // a menu ignores clicks in its first moments
    if (before) {
      await before();
    }
    await item.click();
    await page.locator('.context-view .monaco-menu').first().waitFor({ state: 'detached', timeout: 5000 })
      .catch(() => page.keyboard.press('Enter'));
  };
  const panelLabels = async () => (await panel.locator('.monaco-list-row').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
  /** Index in LABELS of the panel row of the memory file NAME, or -1. */
  const sourceRow = (labels, name) => labels.findIndex((l) => l.startsWith(name) && /^\s*(global|project) ·/.test(l.slice(name.length)));
  /** True when the entry row starting with ENTRY sits under the memory file NAME, which is followed by NEXT. */
  const entryUnder = (labels, entry, name, next) => {
    const at = labels.findIndex((l) => l.startsWith(entry));
    const from = sourceRow(labels, name);
    const to = sourceRow(labels, next);
    return at >= 0 && from >= 0 && to >= 0 && from < at && at < to;
  };
  const statusText = async (pattern) => text(page.locator('.statusbar-item', { hasText: pattern }).first());
  const output = page.locator('.part.panel .monaco-editor .view-lines');
  /** The rendered lines of the editor whose .view-lines is VIEWLINES, top to bottom (the DOM order is not the line order). */
  const renderedText = (viewLines) => viewLines.first().locator('.view-line').evaluateAll((els) => els
    .map((e) => [parseFloat(e.style.top) || 0, e.textContent.replace(/\u00a0/g, ' ')])
    .sort((a, b) => a[0] - b[0]).map((x) => x[1]).join('\n'));
  const bundled = (process.env.E2E_SERVER || 'bundled') === 'bundled';

  // 0. The workbench loads and the extension starts its server.
  await page.goto(`${base}/?folder=${encodeURIComponent(world.workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
  step('workbench visible');

  // 1. The panel lists the memory chain of the active file, general to specific.
  await openFile('packages/app/src/notes.md');
  await statusItem.first().waitFor({ timeout: 90000 });
  step('status bar item shows memory files and tokens');
  // Room for the panel: a wider side bar, the folder tree collapsed, the Memory view expanded.
  const sidebar = await page.locator('.part.sidebar').boundingBox();
  await page.mouse.move(sidebar.x + sidebar.width - 1, sidebar.y + 300);
  await page.mouse.down();
  await page.mouse.move(sidebar.x + sidebar.width + 200, sidebar.y + 300, { steps: 5 });
  await page.mouse.up();
  const folders = page.locator('.pane:has(.explorer-folders-view) > .pane-header').first();
  if ((await folders.getAttribute('aria-expanded')) === 'true') {
    await folders.click();
  }
  const header = panel.locator('.pane-header').first();
  if ((await header.getAttribute('aria-expanded')) !== 'true') {
    await header.click();
  }
  // The Memory Notes view starts collapsed here, so the Memory panel has the room (step 13 opens it).
  const notesHeader = notesPane.locator('.pane-header').first();
  await notesHeader.waitFor({ timeout: 30000 });
  if ((await notesHeader.getAttribute('aria-expanded')) === 'true') {
    await notesHeader.click();
  }
  await panelRow('packages/app/GEMINI.md').first().waitFor({ timeout: 30000 });
  const labels = await panelLabels();
  const order = ['~/memory-global/GEMINI.md', 'GEMINI.md', 'packages/app/GEMINI.md'].map((name) => sourceRow(labels, name));
  check('panel lists the chain general to specific', order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
    JSON.stringify(labels));
  check('panel shows scope and tokens', labels.some((l) => /global · ~\d+ tokens?/.test(l)) && labels.some((l) => /project · ~\d+ tokens?/.test(l)),
    JSON.stringify(labels));
  check('panel lists entries', labels.some((l) => l.startsWith('Keep commits small')), JSON.stringify(labels));
  check('status bar says 3 files', /3 files · ~\d+ tokens/.test(await text(statusItem.first())));
  result.panel = labels;
  await screenshot('panel-and-status-bar');

  // 1b. Clicking an entry opens its file there.
  await panelRow('Run the app with').first().click();
  await page.locator('.tab.active', { hasText: 'GEMINI.md' }).first().waitFor({ timeout: 15000 });
  await page.locator('.statusbar-item', { hasText: /Ln 3, Col/ }).first().waitFor({ timeout: 15000 });
  const crumbs = await text(page.locator('.editor-group-container.active .breadcrumbs-control').first());
  check('the entry opens packages/app/GEMINI.md', /packages\s*\S?\s*app\s*\S?\s*GEMINI\.md/.test(crumbs), crumbs);
  check('the file on disk has the entry on line 3', read(ws('packages/app/GEMINI.md')).split('\n')[2].startsWith('- Run the app with'));
  check('the editor shows the entry on line 3', (await text(editorLine(2))).startsWith('- Run the app with'));
  const cursorAt = await statusText(/Ln \d+, Col \d+/);
  result.entryOpenedAt = cursorAt;
  check('the entry is selected', /Ln 3, Col \d+ \(\d+ selected\)/.test(cursorAt)
    && await page.locator('.editor-group-container.active .monaco-editor .selected-text').count() > 0, cursorAt);
  step('panel entry opens the file at the entry');
  await screenshot('panel-entry-opened');

  // 1c. A memory file that is not valid UTF-8 is loaded as the agent loads it (each bad byte read
  // as U+FFFD) and its row carries the problem count of its encoding warning.
  await openFile('packages/legacy/notes.md');
  const badBytes = panelRow('packages/legacy/GEMINI.md').filter({ hasText: 'project ·' });
  await badBytes.first().waitFor({ timeout: 20000 });
  await until('the problem mark on the bad-bytes source', async () => /1 problem in this file/.test(
    await badBytes.first().locator('.monaco-icon-label').first().getAttribute('aria-label') ?? ''), 20000);
  check('the bad-bytes source is loaded with its entry', await panelRow('Old \ufffd\ufffd').count() > 0, JSON.stringify(await panelLabels()));
  step('bad-bytes source loaded and marked');
  await screenshot('panel-bad-bytes-source');
  await openFile('packages/app/src/notes.md');
  await panelRow('packages/app/GEMINI.md').first().waitFor({ timeout: 20000 });

  // 1d. The command palette lists the Memory Lens commands (and not the panel-only ones).
  await openPalette('Memory Lens');
  const paletteCommands = ['Remember…', 'Save Selection to Project Memory', 'Save Selection to Global Memory',
    'Create Note from Selection', 'Search Notes…', 'Refresh Notes',
    'Show Effective Memory', 'Open Global Memory File', 'Refresh', 'Restart Server'].map((t) => `Memory Lens: ${t}`);
  const listed = await until('the Memory Lens commands in the palette', async () => {
    const names = (await page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts())
      .map((s) => s.replace(/\s+/g, ' ').trim());
    return paletteCommands.every((c) => names.includes(c)) && names;
  }, 15000);
  result.paletteCommands = listed;
  check('the palette lists the Memory Lens commands', paletteCommands.every((c) => listed.includes(c)), JSON.stringify(listed));
  check('the palette hides the panel-only commands',
    !listed.some((n) => /Memory Lens: (Open Entry|Delete Entry|Move to (Global|Project) Memory|Open Note|Open Note's JSON File|Delete Note|Load More Notes|Clear Note Search)$/.test(n)),
    JSON.stringify(listed));
  step('palette lists the Memory Lens commands');
  await screenshot('palette-memory-lens-commands');
  await page.keyboard.press('Escape');

  // 2. "Remember…": the `#` flow, choosing Project memory, lands in <root>/GEMINI.md.
  await palette('Memory Lens: Remember…');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('# Prefer small pull requests');
  await screenshot('remember-input');
  await page.keyboard.press('Enter');
  const projectChoice = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Project memory' });
  await projectChoice.first().waitFor({ timeout: 15000 });
  check('scope choice offers user memory', await page.locator('.quick-input-list .monaco-list-row', { hasText: 'User (global) memory' }).count() > 0);
  await screenshot('remember-scope-pick');
  await projectChoice.first().click();
  await notification('Saved to project memory').first().waitFor({ timeout: 20000 });
  await until('the entry in GEMINI.md', () => read(ws('GEMINI.md')).includes('- Prefer small pull requests'));
  check('remember wrote the entry without the #', !read(ws('GEMINI.md')).includes('# Prefer small'));
  await panelRow('Prefer small pull requests').first().waitFor({ timeout: 15000 });
  step('Remember… saved to project memory');
  await screenshot('remember-saved');

  // 3. "Save selection to global memory" from the Ctrl+. menu: on disk at once (no preview, no
  // unsaved buffer), a notification names file and line; Undo removes exactly that entry; saved
  // again, Open goes to it.
  const lightbulbSave = async (title) => {
    await openFile('packages/app/src/notes.md');
    await editorLine(0).click();
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+End');
    const action = page.locator('.action-widget .monaco-list-row', { hasText: title });
    // VS Code may ask for code actions before the new selection reached it and then says "No code
    // actions available": ask again, as a user would, until the menu lists the action.
    await until(`the Ctrl+. menu with "${title}"`, async () => {
      if ((await action.count()) > 0) {
        return true;
      }
      await page.keyboard.press('Control+Period');  // (not Escape: it would drop the selection)
      await action.first().waitFor({ timeout: 5000 }).catch(() => {});
      return (await action.count()) > 0;
    }, 30000);
    // The menu sits under a pointer block: choose with the keyboard, as users of Ctrl+. do.
    await until(`the action "${title}" focused`, async () => {
      if ((await page.locator('.action-widget .monaco-list-row.focused', { hasText: title }).count()) > 0) {
        return true;
      }
      await page.keyboard.press('ArrowDown');
      return false;
    }, 10000);
    await page.keyboard.press('Enter');
  };
  const globalHas = () => read(world.globalFile).includes('Deploys go through the staging cluster first');
  await openFile('packages/app/src/notes.md');
  await editorLine(0).click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await page.keyboard.press('Control+Period');
  await page.locator('.action-widget .monaco-list-row', { hasText: 'Save selection to global memory' }).first().waitFor({ timeout: 30000 });
  check('code actions offer project memory too', await page.locator('.action-widget .monaco-list-row', { hasText: 'Save selection to project memory' }).count() > 0);
  await screenshot('save-selection-code-actions');
  await page.keyboard.press('Escape');
  await lightbulbSave('Save selection to global memory');
  const savedByAction = notification('Saved to global memory').filter({ hasText: 'Deploys go through' });
  await savedByAction.first().waitFor({ timeout: 20000 });
  await until('the selection in the global memory file', globalHas, 20000);
  result.changePreviewShown = await page.locator('.monaco-button', { hasText: /^Apply$/ }).count() > 0;
  check('no change preview', !result.changePreviewShown);
  check('no unsaved memory file', await page.locator('.tab.dirty').count() === 0);
  const savedText = await text(savedByAction.first());
  result.lightbulbSaveNotification = savedText;
  check('the notification names the file and line', /~\/memory-global\/GEMINI\.md:3\b/.test(savedText), savedText);
  const savedLines = read(world.globalFile).split('\n');
  check('the entry is on line 3 on disk', savedLines[2] === '- Deploys go through the staging cluster first.', JSON.stringify(savedLines));
  step('lightbulb: selection saved to global memory on disk');
  await screenshot('save-selection-saved-with-undo');
  await savedByAction.first().locator('.monaco-button', { hasText: /^Undo$/ }).first().click();
  await until('the entry removed by Undo', () => !globalHas(), 20000);
  check('Undo left the rest of the file', read(world.globalFile) === '## Gemini Added Memories\n- My name is Alice.\n', read(world.globalFile));
  await page.locator('.statusbar-item', { hasText: 'removed "Deploys go through' }).first().waitFor({ timeout: 10000 });
  step('lightbulb save undone');
  await screenshot('save-selection-undone');
  // Saved again; Open shows the entry in its file.
  await lightbulbSave('Save selection to global memory');
  await savedByAction.first().waitFor({ timeout: 20000 });
  await until('the selection in the global memory file again', globalHas, 20000);
  await savedByAction.first().locator('.monaco-button', { hasText: /^Open$/ }).first().click();
  await page.locator('.tab.active', { hasText: 'GEMINI.md' }).first().waitFor({ timeout: 15000 });
  await page.locator('.statusbar-item', { hasText: /Ln 3, Col/ }).first().waitFor({ timeout: 15000 });
  const openedCrumbs = await text(page.locator('.editor-group-container.active .breadcrumbs-control').first());
  check('Open shows the global memory file', /memory-global/.test(openedCrumbs), openedCrumbs);
  step('selection saved to global memory, opened at its line');
  await screenshot('save-selection-applied');

  // 3b. The same from the command palette, to project memory.
  await openFile('packages/app/src/notes.md');
  await editorLine(2).click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await palette('Memory Lens: Save Selection to Project Memory');
  await notification('Saved to project memory').filter({ hasText: 'Some other notes' }).first().waitFor({ timeout: 20000 });
  await until('the palette save in GEMINI.md', () => read(ws('GEMINI.md')).includes('- Some other notes.'));
  step('palette: selection saved to project memory');

  // 3c. And "Save Selection to Global Memory" from the command palette.
  await editorLine(4).click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await palette('Memory Lens: Save Selection to Global Memory', { keepSelection: true });
  const savedGlobal = notification('Saved to global memory').filter({ hasText: 'Ask before force-pushing' });
  await savedGlobal.first().waitFor({ timeout: 20000 });
  await until('the palette save in the global memory file', () => read(world.globalFile).includes('- Ask before force-pushing to main.'));
  check('the palette global save left project memory alone', !read(ws('GEMINI.md')).includes('force-pushing'));
  await panelRow('Ask before force-pushing').first().waitFor({ timeout: 15000 });
  const afterGlobalSave = await panelLabels();
  check('the panel shows the entry under global memory',
    entryUnder(afterGlobalSave, 'Ask before force-pushing', '~/memory-global/GEMINI.md', 'GEMINI.md'), JSON.stringify(afterGlobalSave));
  step('palette: selection saved to global memory');
  await page.mouse.move(1000, 450); // off the tab the palette row left it over
  await screenshot('palette-save-selection-to-global');

  // 4. A duplicate entry, typed into a memory file, gets a warning squiggle as you type.
  await openFile('packages/app/GEMINI.md');
  const lens = page.locator('.codelens-decoration', { hasText: /Effective memory here: \d+ files? · ~\d+ tokens/ });
  await lens.first().waitFor({ timeout: 30000 });
  result.codeLens = await text(lens.first());
  step('code lens visible');
  await screenshot('code-lens');
  // Clicking the lens opens the effective memory for that folder.
  await lens.first().locator('a').first().click();
  await page.locator('.tab.active', { hasText: 'Gemini CLI memory (GEMINI.md)' }).first().waitFor({ timeout: 15000 });
  await until('the effective memory from the lens', async () => (await text(activeEditorLines())).includes('Run the app with'));
  await palette('View: Close Editor');
  await page.locator('.tab.active', { hasText: 'GEMINI.md' }).first().waitFor({ timeout: 15000 });
  await editorLine(0).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('- Tests live in tests/.');
  const squiggle = page.locator('.editor-group-container.active .squiggly-warning');
  await squiggle.first().waitFor({ timeout: 30000 });
  step('duplicate diagnostic visible');
  const dupHover = page.locator('.monaco-hover', { hasText: /duplicate/i });
  await hoverUntil(squiggle.first(), dupHover.first(), 0.5);
  result.duplicateHover = (await text(dupHover.first())).slice(0, 500);
  await screenshot('duplicate-diagnostic');
  await page.mouse.move(5, 5);
  await page.keyboard.press('Escape');
  // Revert the typing so the file on disk stays as it was.
  await palette('File: Revert File');
  await until('the squiggle gone after revert', async () => (await squiggle.count()) === 0, 15000);

  // 5. Hover on an entry: where else it appears.
  const redundant = page.locator('.editor-group-container.active .view-line', { hasText: 'Use pnpm instead of npm.' });
  const entryHover = page.locator('.monaco-hover', { hasText: /GEMINI\.md/ });
  await hoverUntil(redundant.first(), entryHover.first(), 0.1);
  result.entryHover = (await text(entryHover.first())).slice(0, 500);
  step('hover visible');
  await screenshot('hover');
  await page.mouse.move(5, 5);
  await page.keyboard.press('Escape');

  // 6. Delete an entry from the panel (context menu, then confirm).
  await openFile('packages/app/src/notes.md');
  const keep = panelRow('Keep commits small');
  await keep.first().waitFor({ timeout: 15000 });
  await keep.first().click({ button: 'right' });
  const del = page.locator('.context-view .action-label', { hasText: 'Delete Entry' });
  await del.first().waitFor({ timeout: 10000 });
  check('context menu offers Move to Global Memory', await page.locator('.context-view .action-label', { hasText: 'Move to Global Memory' }).count() > 0);
  await screenshot('panel-context-menu');
  await page.keyboard.press('Escape');
  await contextMenu(keep.first(), 'Delete Entry');
  const confirm = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Delete$/ });
  await confirm.first().waitFor({ timeout: 10000 });
  await screenshot('delete-confirm');
  await confirm.first().click();
  await until('the entry gone from GEMINI.md', () => !read(ws('GEMINI.md')).includes('Keep commits small'));
  await until('the entry gone from the panel', async () => (await panelRow('Keep commits small').count()) === 0);
  check('other entries stay', read(ws('GEMINI.md')).includes('- Use pnpm instead of npm.'));
  step('entry deleted from the panel');
  await screenshot('entry-deleted');

  // 7. Move an entry from project to global memory from the panel.
  const tests = panelRow('Tests live in tests/');
  await contextMenu(tests.first(), 'Move to Global Memory');
  await until('the entry moved to global memory', () => read(world.globalFile).includes('Tests live in tests/')
    && !read(ws('packages/app/GEMINI.md')).includes('Tests live in tests/'));
  await notification('moved').first().waitFor({ timeout: 10000 });
  step('entry moved to global memory');
  await screenshot('entry-moved-to-global');

  // 8. The effective memory document, from the palette (read-only), then from the status bar;
  // then the annotated form; live updates.
  await page.keyboard.press('Escape');
  await palette('Memory Lens: Show Effective Memory', { shot: 'palette-show-effective-memory' });
  await page.locator('.tab.active', { hasText: 'Gemini CLI memory (notes.md)' }).first().waitFor({ timeout: 15000 });
  const effectiveText = await until('the merged text from the palette', async () => {
    const t = await renderedText(activeEditorLines());
    return t.includes('My name is Alice') && t.includes('Ask before force-pushing') && t.includes('Run the app with') && t;
  });
  step('palette: effective memory document open');
  await editorLine(1).click();
  await page.keyboard.press('End');
  await page.keyboard.type('x');
  const readOnly = page.locator('.editor-group-container.active .monaco-editor-overlaymessage', { hasText: 'Cannot edit in read-only editor' });
  await readOnly.first().waitFor({ timeout: 10000 });
  check('typing leaves the effective memory unchanged', (await renderedText(activeEditorLines())) === effectiveText);
  check('the effective memory tab is not dirty', await page.locator('.tab.active.dirty').count() === 0);
  step('palette: effective memory document open, read-only');
  await screenshot('effective-memory-read-only');
  await palette('View: Close Editor');
  await page.locator('.tab.active', { hasText: 'notes.md' }).first().waitFor({ timeout: 15000 });
  check('the effective memory tab closed', await page.locator('.tab', { hasText: 'Gemini CLI memory (notes.md)' }).count() === 0);
  await statusItem.first().click();
  await page.locator('.tab.active', { hasText: 'Gemini CLI memory (notes.md)' }).first().waitFor({ timeout: 15000 });
  await until('the merged text', async () => {
    const t = await text(activeEditorLines());
    return t.includes('My name is Alice') && t.includes('Prefer small pull requests') && t.includes('Deploys go through');
  });
  step('effective memory document open');
  await screenshot('effective-memory');
  await palette('Memory Lens: Toggle Annotated Effective Memory');
  await page.locator('.tab.active', { hasText: 'annotated' }).first().waitFor({ timeout: 15000 });
  await until('the annotated form', async () => (await text(activeEditorLines())).includes('--- Context from:'));
  step('annotated form shown');
  await screenshot('effective-memory-annotated');
  // 8a. In the annotated form each entry links to its line in its file (Ctrl+click), and each
  // source's block folds.
  const annotatedTab = page.locator('.tab.active', { hasText: 'annotated' }).first();
  const runLink = page.locator('.editor-group-container.active .view-line', { hasText: 'Run the app with' })
    .locator('.detected-link').first();
  await runLink.waitFor({ timeout: 20000 });
  const pathLinks = await page.locator('.editor-group-container.active .view-line', { hasText: '--- Context from: ' })
    .locator('.detected-link').count();
  check('every source path in the annotated form is a link', pathLinks >= 3, String(pathLinks));
  // The document is re-rendered when the server reports a change: a click on a line being replaced is retried.
  await until('the entry link opened', async () => {
    await runLink.click({ modifiers: ['Control'], timeout: 3000 }).catch(() => {});
    return (await page.locator('.tab.active', { hasText: /^GEMINI\.md/ }).count()) > 0;
  }, 30000);
  await page.locator('.tab.active', { hasText: /^GEMINI\.md/ }).first().waitFor({ timeout: 15000 });
  // (The cursor's line: the status bar may not show Ln/Col until the editor has focus.)
  await page.locator('.editor-group-container.active .line-numbers.active-line-number', { hasText: /^3$/ }).first()
    .waitFor({ timeout: 15000 });
  const linkCrumbs = await text(page.locator('.editor-group-container.active .breadcrumbs-control').first());
  check('the entry link opens packages/app/GEMINI.md', /packages\s*\S?\s*app\s*\S?\s*GEMINI\.md/.test(linkCrumbs), linkCrumbs);
  step('annotated form: an entry link opens its file at its line');
  await screenshot('effective-memory-link-opened');
  await page.locator('.tab', { hasText: 'annotated' }).first().click();
  await annotatedTab.waitFor({ timeout: 15000 });
  await palette('Fold All');
  const folded = await until('the annotated form folded per source', async () => {
    const t = await renderedText(activeEditorLines());
    return (t.match(/--- Context from: /g) ?? []).length >= 3 && !t.includes('My name is Alice') && !t.includes('Run the app with') && t;
  }, 15000);
  result.foldedAnnotated = folded.split('\n');
  step('annotated form folded per source');
  await screenshot('effective-memory-annotated-folded');
  await palette('Unfold All');
  await until('the annotated form unfolded', async () => (await renderedText(activeEditorLines())).includes('Run the app with'), 15000);
  fs.appendFileSync(world.globalFile, '- Written by another program.\n');
  await until('the live update of the effective memory', async () => (await text(activeEditorLines())).includes('Written by another program'), 15000);
  await until('the live update of the panel', async () => (await panelRow('Written by another program').count()) > 0, 15000);
  step('effective memory document and panel updated live');
  await screenshot('effective-memory-live-update');

  // 8b. Move a global entry to project memory from the panel.
  await contextMenu(panelRow('Written by another program').first(), 'Move to Project Memory', async () => {
    check('a global entry is not offered Move to Global Memory',
      await page.locator('.context-view .action-label', { hasText: 'Move to Global Memory' }).count() === 0);
    await screenshot('panel-context-menu-global-entry');
  });
  await until('the entry moved to project memory', () => read(ws('GEMINI.md')).includes('Written by another program')
    && !read(world.globalFile).includes('Written by another program'));
  await notification('to project memory').filter({ hasText: 'Written by another program' }).first().waitFor({ timeout: 10000 });
  const movedIn = await until('the moved entry under project memory in the panel', async () => {
    const l = await panelLabels();
    return entryUnder(l, 'Written by another program', 'GEMINI.md', 'packages/app/GEMINI.md') && l;
  }, 15000);
  result.panelAfterMoveToProject = movedIn;
  await until('the annotated effective memory showing the entry in the project file', async () => {
    const t = await renderedText(activeEditorLines());
    const from = t.indexOf(`--- Context from: ${ws('GEMINI.md')} ---`);
    const at = t.indexOf('Written by another program');
    return from >= 0 && at > from && at < t.indexOf(`--- End of Context from: ${ws('GEMINI.md')} ---`);
  }, 15000);
  await page.mouse.move(1000, 450);
  step('entry moved to project memory');
  await screenshot('entry-moved-to-project');

  // 8c. An @import is expanded in the effective memory document, as Gemini CLI expands it; the
  // agent picker (Memory Lens: Choose Agent…) lists the agents, and choosing Codex switches the
  // document to what Codex loads: the root AGENTS.md, no imports, none of the GEMINI.md text.
  // Choosing Gemini CLI again switches back. (Each choice writes the user setting memoryLens.agent:
  // the restart in step 9 then shows that the settings of the Remote tab, memoryLens.globalDir,
  // still apply.)
  await openFile('packages/imp/GEMINI.md');
  await palette('Memory Lens: Show Effective Memory');
  await page.locator('.tab.active', { hasText: 'Gemini CLI memory (GEMINI.md)' }).first().waitFor({ timeout: 15000 });
  const importText = await until('the expanded import', async () => {
    const t = await renderedText(activeEditorLines());
    return t.includes('<!-- Imported from: ./shared-rules.md -->') && t.includes('Imported rule: lint before every commit.')
      && t.includes('<!-- End of import from: ./shared-rules.md -->') && t;
  });
  check('the @import line itself is replaced by the imported text', !importText.includes('\n@./shared-rules.md'), importText);
  result.importExpanded = importText.split('\n');
  step('effective memory document: @import expanded');
  await screenshot('effective-memory-import-expanded');
  await palette('Memory Lens: Choose Agent…');
  const codexPick = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: /^Codex$/ }) }).first();
  await codexPick.waitFor({ timeout: 15000 });
  const agentRows = await page.locator('.quick-input-list .monaco-list-row').evaluateAll((rows) => rows
    .sort((a, b) => (parseFloat(a.style.top) || 0) - (parseFloat(b.style.top) || 0))
    .map((r) => (r.querySelector('.label-name')?.textContent ?? '').trim()));
  // Every agent of the memoryLens.agent setting, in its order (agents are being added: read them from the manifest).
  const pickerAgents = require('../package.json').contributes.configuration.properties['memoryLens.agent'].enumDescriptions;
  check('the agent picker lists every agent', JSON.stringify(agentRows) === JSON.stringify(pickerAgents),
    `${JSON.stringify(agentRows)} (expected ${JSON.stringify(pickerAgents)})`);
  await screenshot('agent-picker');
  step('agent picker lists the agents');
  await codexPick.click();
  await page.locator('.tab.active', { hasText: 'Codex memory (GEMINI.md)' }).first().waitFor({ timeout: 15000 });
  const codexText = await until('the Codex view of the effective memory document', async () => {
    const t = await renderedText(activeEditorLines());
    return t.includes('Codex rule: run make check before pushing.') && t;
  });
  check('the Codex view has none of the Gemini-only text', !codexText.includes('Imported rule: lint before every commit.')
    && !codexText.includes('<!-- Imported from:') && !codexText.includes('# Imports'), codexText);
  // (The switch closes the old tabs one by one after opening the new ones: wait for it.)
  await until('the Gemini CLI view of the document replaced',
    async () => await page.locator('.tab', { hasText: 'Gemini CLI memory (GEMINI.md)' }).count() === 0, 15000);
  await page.locator('.statusbar-item', { hasText: /Codex · \d+ files? · ~\d+ tokens?/ }).first().waitFor({ timeout: 15000 });
  result.codexView = codexText.split('\n');
  step('agent picker: Codex chosen, the effective memory document and the status bar show what Codex loads');
  await screenshot('effective-memory-codex');
  await palette('Memory Lens: Choose Agent…');
  const geminiPick = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: /^Gemini CLI$/ }) }).first();
  await geminiPick.waitFor({ timeout: 15000 });
  await geminiPick.click();
  await page.locator('.tab.active', { hasText: 'Gemini CLI memory (GEMINI.md)' }).first().waitFor({ timeout: 15000 });
  await until('the Gemini CLI view with the expanded import again', async () =>
    (await renderedText(activeEditorLines())).includes('Imported rule: lint before every commit.'));
  step('agent picker: Gemini CLI chosen again');
  await palette('View: Close Editor');
  await openFile('packages/app/src/notes.md');

  // 9. Restart the server from the palette, with the log open: it shows the restart, how the server
  // was found ("Server resolution:") and the server's own lines ("[server]", at their own level).
  await palette('Memory Lens: Show Log');
  await output.first().waitFor({ timeout: 15000 });
  await palette('Memory Lens: Restart Server');
  await page.locator('.statusbar-item', { hasText: 'Memory Lens: language server restarted' }).first().waitFor({ timeout: 60000 });
  const restartTail = await until('the restart in the log', async () => {
    const log = await renderedText(output);
    const tail = log.slice(log.lastIndexOf('\n', log.lastIndexOf('Restarting the language server')) + 1);
    return log.includes('Restarting the language server') && tail.includes('Server resolution: ')
      && /Starting the language server \(\w+\)/.test(tail) && tail.includes('Language server running')
      && (!bundled || /\[info\] \[server\] /.test(tail)) && tail;
  }, 20000);
  await panelRow('Written by another program').first().waitFor({ timeout: 30000 }); // the panel is back
  result.restartLog = restartTail.split('\n').map((l) => l.replace(/^\S+ \S+ /, ''));
  check('the resolution names the server that was started', bundled
    ? /Server resolution: bundled server with python3/.test(restartTail) && /Starting the language server \(bundled\)/.test(restartTail)
    : /Server resolution: setting: /.test(restartTail), restartTail);
  step('palette: server restarted, log shows it');
  await page.mouse.move(1000, 300);
  await screenshot('restart-server-output-log');
  // The server's own lines and the resolution over the whole session: the output filtered, maximized.
  await palette('View: Toggle Maximized Panel');
  const outputFilter = page.locator('.part.panel input[placeholder="Filter"]').first();
  await outputFilter.fill('server');
  const filtered = await until('the server lines in the filtered log', async () => {
    const lines = (await renderedText(output)).split('\n').filter((l) => l.trim());
    // (Long lines wrap: check that a line without "server" is filtered out rather than every visual line.)
    return !lines.some((l) => l.includes(' activating')) && lines.some((l) => l.includes('Server resolution: '))
      && (!bundled || lines.some((l) => /\[info\] \[server\] /.test(l))) && lines;
  }, 15000);
  check('server stderr lines keep their level', !filtered.some((l) => /\[server\] memory-lens: (INFO|WARNING|DEBUG):/.test(l)),
    JSON.stringify(filtered));
  result.serverLogLines = filtered.filter((l) => l.includes('[server]')).map((l) => l.replace(/^\S+ \S+ /, ''));
  step('log shows the server lines and the resolution');
  await page.mouse.move(1000, 300);
  await screenshot('output-server-lines');
  await outputFilter.fill('');
  await palette('View: Toggle Maximized Panel');
  await openFile('packages/app/src/notes.md');
  await statusItem.first().waitFor({ timeout: 60000 });
  await panelRow('Written by another program').first().waitFor({ timeout: 30000 });
  step('server restarted');
  // The restarted server still has memoryLens.globalDir (the agent choice of step 8c came before).
  await until('the configured global memory file in the panel after the restarts', async () =>
    sourceRow(await panelLabels(), '~/memory-global/GEMINI.md') >= 0, 30000);
  check('status bar says 3 files after the restarts', /3 files · ~\d+ tokens/.test(await text(statusItem.first())),
    await text(statusItem.first()));
  step('restarted server: the global directory setting still applies');

  // 10. Other palette commands: open the global memory file, refresh.
  await palette('Memory Lens: Open Global Memory File');
  await page.locator('.tab.active', { hasText: 'memory-global' }).first().waitFor({ timeout: 15000 });
  await palette('Memory Lens: Refresh');
  await page.locator('.statusbar-item', { hasText: /Memory Lens: \d+ memory file\(s\) found/ }).first().waitFor({ timeout: 15000 });
  step('open global memory file and refresh');

  // 11. The log: client messages and, at log level Trace, the LSP trace in the same channel.
  await palette('Developer: Set Log Level...');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Memory Lens' }).first().click();
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Trace' }).first().click();
  await palette('Memory Lens: Refresh');
  await palette('Memory Lens: Show Log');
  await until('the client log and the LSP trace', async () => {
    const log = await text(output.first());
    return /\[trace\] Sending request 'workspace\/executeCommand/.test(log) && /\[trace\] Received response/.test(log);
  }, 15000);
  step('log shows client messages and the LSP trace');
  await screenshot('output-log-with-trace');

  // 12. A server command that cannot run: a clear error naming the fix; fixing it restarts the server.
  // (Workspace settings: VS Code watches .vscode/settings.json of the folder.)
  const settingsFile = ws('.vscode/settings.json');
  fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
  fs.writeFileSync(settingsFile, JSON.stringify({ 'memoryLens.server.command': ['/nonexistent/memory-lens', 'serve'] }, null, 2));
  const startError = notification('which was not found');
  await startError.first().waitFor({ timeout: 30000 });
  check('the start error offers to open the settings', await startError.first().locator('.monaco-button', { hasText: 'Open Settings' }).count() > 0);
  await screenshot('server-command-error');
  fs.writeFileSync(settingsFile, '{}\n');
  await openFile('packages/app/src/notes.md');
  await statusItem.first().waitFor({ timeout: 60000 });
  step('server command error shown, then recovered');

  // 13. Notes: "Create Note from Selection" from the editor's context menu (project) and from the
  // palette (global), a note written by another program, search, a note opened in a tab, edited
  // and saved, reloaded after an outside change, a conflicting save refused, delete with
  // confirmation. Each checked on disk (the note's JSON file) and in the Memory Notes view.
  await palette('View: Hide Panel');
  const projectNotes = ws('.memory-lens/notes');
  const globalNotes = path.join(world.home, '.config', 'memory-lens', 'notes');
  /** The note named NAME in DIR as stored on disk ({file, name, content, tags, ...}), or undefined. */
  const noteOnDisk = (dir, name) => {
    for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      try {
        const json = JSON.parse(read(path.join(dir, f)));
        if (json.name === name) {
          return { file: path.join(dir, f), ...json };
        }
      } catch {
        // not a note file
      }
    }
    return undefined;
  };
  const sameTags = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const quickInput = page.locator('.quick-input-widget input');
  if ((await header.getAttribute('aria-expanded')) === 'true') {
    await header.click(); // the Memory panel folds away: the notes get the room
  }
  if ((await notesHeader.getAttribute('aria-expanded')) !== 'true') {
    await notesHeader.click();
  }
  await notesRow('Project notes').first().waitFor({ timeout: 30000 });
  await notesRow('Global notes').first().waitFor({ timeout: 10000 });
  check('the notes view starts empty', (await notesLabels()).every((l) => /^(Project|Global) notes/.test(l)), JSON.stringify(await notesLabels()));
  step('notes view shows both scopes');

  // 13a. Create Note from Selection, from the editor's context menu, into the project.
  await openFile('packages/app/src/notes.md');
  await editorLine(0).click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await editorLine(0).click({ button: 'right', position: { x: 40, y: 8 } });
  const createItem = page.locator('.context-view .action-label', { hasText: 'Create Note from Selection' }).first();
  await createItem.waitFor({ timeout: 10000 });
  await page.waitForTimeout(300); // a menu ignores clicks in its first moments
  await screenshot('note-create-context-menu');
  await createItem.click();
  const scopeRows = page.locator('.quick-input-list .monaco-list-row');
  await scopeRows.filter({ hasText: 'Project note' }).first().waitFor({ timeout: 15000 });
  check('the scope pick offers the project first inside a project', (await text(scopeRows.first())).includes('Project note'));
  check('the scope pick offers global notes', await scopeRows.filter({ hasText: 'Global note' }).count() > 0);
  await screenshot('note-create-scope-pick');
  await scopeRows.filter({ hasText: 'Project note' }).first().click();
  await until('the suggested name', async () => (await quickInput.inputValue()) === 'Deploys go through the staging cluster first.', 15000);
  await screenshot('note-create-name-suggested');
  await quickInput.fill('Deploy via staging');
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: 'Tags, separated by commas' }).first().waitFor({ timeout: 10000 });
  await quickInput.fill('deploy, staging');
  await screenshot('note-create-tags');
  await page.keyboard.press('Enter');
  await notification('Created the project note "Deploy via staging"').first().waitFor({ timeout: 20000 });
  const created = await until('the note file in .memory-lens/notes', () => noteOnDisk(projectNotes, 'Deploy via staging'));
  check('the note file holds the selection, the tags and the scope',
    created.content === 'Deploys go through the staging cluster first.' && sameTags(created.tags, ['deploy', 'staging'])
    && created.scope === 'project' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(created.created_at), JSON.stringify(created));
  check('the note file name is derived from the name', path.basename(created.file).startsWith('deploy-via-staging-'), created.file);
  await until('the note in the notes view with its tags', async () => (await notesLabels()).some((l) => l === 'Deploy via staging — deploy, staging'), 15000);
  result.noteCreated = { ...created, file: path.relative(world.workspace, created.file) };
  step('note created from the selection (context menu)');
  await screenshot('note-created-from-selection');

  // 13b. The same from the palette, as a global note with the suggested name and no tags.
  await editorLine(4).click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await palette('Memory Lens: Create Note from Selection', { keepSelection: true });
  await scopeRows.filter({ hasText: 'Global note' }).first().waitFor({ timeout: 15000 });
  await scopeRows.filter({ hasText: 'Global note' }).first().click();
  await until('the suggested name', async () => (await quickInput.inputValue()) === 'Ask before force-pushing to main.', 15000);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: 'Tags, separated by commas' }).first().waitFor({ timeout: 10000 });
  await page.keyboard.press('Enter');
  await notification('Created the global note').first().waitFor({ timeout: 20000 });
  const globalNote = await until('the global note file', () => noteOnDisk(globalNotes, 'Ask before force-pushing to main.'));
  check('the global note holds the line, no tags', globalNote.content === 'Ask before force-pushing to main.'
    && sameTags(globalNote.tags, []) && globalNote.scope === 'global', JSON.stringify(globalNote));
  check('the global note is not in the project', noteOnDisk(projectNotes, 'Ask before force-pushing to main.') === undefined);
  const bothScopes = await until('the global note under Global notes', async () => {
    const l = await notesLabels();
    const g = l.findIndex((x) => x.startsWith('Global notes'));
    const at = l.findIndex((x) => x.startsWith('Ask before force-pushing to main.'));
    return g >= 0 && at > g && l.findIndex((x) => x.startsWith('Deploy via staging')) < g && l;
  }, 15000);
  result.notesView = bothScopes;
  step('palette: global note created');

  // 13c. A note written by another program (an agent, git) shows up by itself.
  fs.writeFileSync(path.join(projectNotes, 'release_train.json'), JSON.stringify({
    name: 'release_train', content: 'Releases leave every Tuesday.', tags: ['release'],
    created_at: '2026-01-05T10:00:00Z', updated_at: '2026-01-05T10:00:00Z', scope: 'project',
  }, null, 2) + '\n');
  await until('the note written by another program in the view', async () => (await notesLabels()).includes('release_train — release'), 20000);
  // A file in the notes directory that is not a usable note: marked by name, skipped, left alone.
  const broken = '{"name": "broken", "content": \n';
  fs.writeFileSync(path.join(projectNotes, 'broken.json'), broken);
  await until('the unusable note file marked in the view', async () => (await notesLabels())
    .some((l) => l.startsWith('broken.json — not a usable note: ')), 20000);
  check('the unusable note file is left as it was', read(path.join(projectNotes, 'broken.json')) === broken);
  check('the unusable note file is not counted as a note', (await notesLabels()).some((l) => l.startsWith('Project notes — 2 ·')),
    JSON.stringify(await notesLabels()));
  step('note written by another program shown');
  await page.mouse.move(1000, 450);
  await screenshot('notes-view-three-notes');

  // 13d. Search from the view's title bar, then clear the search.
  await notesHeader.hover();
  await notesPane.locator('.pane-header .action-label[aria-label^="Search Notes"]').first().click();
  await quickInput.waitFor({ state: 'visible', timeout: 10000 });
  await quickInput.fill('staging');
  await page.keyboard.press('Enter');
  const searched = await until('the search results', async () => {
    const l = await notesLabels();
    return l.includes('Deploy via staging — deploy, staging') && !l.some((x) => x.startsWith('release_train'))
      && !l.some((x) => x.startsWith('Ask before')) && l;
  }, 15000);
  check('the view says what it shows', (await text(notesPane)).includes('1 note matches "staging"'), await text(notesPane));
  check('the view header names the search', (await text(notesHeader)).includes('search: staging'), await text(notesHeader));
  result.notesSearch = searched;
  step('notes search: staging');
  await screenshot('notes-search');
  await palette('Memory Lens: Search Notes…');
  await quickInput.waitFor({ state: 'visible', timeout: 10000 });
  check('the search box starts with the current query', (await quickInput.inputValue()) === 'staging');
  await quickInput.fill('tues*');
  await page.keyboard.press('Enter');
  await until('the prefix search results', async () => {
    const l = await notesLabels();
    return l.includes('release_train — release') && !l.some((x) => x.startsWith('Deploy via staging'));
  }, 15000);
  await notesHeader.hover();
  await notesPane.locator('.pane-header .action-label[aria-label^="Clear Note Search"]').first().click();
  await until('every note after clearing the search', async () => {
    const l = await notesLabels();
    return ['Deploy via staging', 'release_train', 'Ask before force-pushing'].every((n) => l.some((x) => x.startsWith(n)));
  }, 15000);
  check('the search mark is gone', !(await text(notesHeader)).includes('search:'));
  step('notes search cleared');

  // 13e. Open the note in a tab (Markdown with its tags), edit the tags and the text, save.
  await notesRow('Deploy via staging').first().click();
  await page.locator('.tab.active', { hasText: 'Deploy via staging.md' }).first().waitFor({ timeout: 15000 });
  const noteText = () => renderedText(activeEditorLines());
  await until('the note document', async () => (await noteText()) === '---\ntags: deploy, staging\n---\nDeploys go through the staging cluster first.', 15000);
  step('note opened in a tab');
  await screenshot('note-open-in-tab');
  await editorLine(1).click();
  await page.keyboard.press('End');
  await page.keyboard.type(', ops');
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('Then promote to production.');
  await page.locator('.tab.active.dirty', { hasText: 'Deploy via staging.md' }).first().waitFor({ timeout: 10000 });
  await page.keyboard.press('Control+S');
  const edited = await until('the edit in the note file', () => {
    const n = noteOnDisk(projectNotes, 'Deploy via staging');
    return n && n.content === 'Deploys go through the staging cluster first.\nThen promote to production.' && n;
  }, 20000);
  check('the saved tags', sameTags(edited.tags, ['deploy', 'staging', 'ops']), JSON.stringify(edited.tags));
  check('the same file, creation time kept', edited.file === created.file && edited.created_at === created.created_at);
  check('the file is still the note JSON', Object.keys(JSON.parse(read(edited.file))).sort().join() === 'content,created_at,name,scope,tags,updated_at');
  await until('the tab saved', async () => (await page.locator('.tab.active.dirty').count()) === 0, 10000);
  await until('the new tags in the notes view', async () => (await notesLabels()).includes('Deploy via staging — deploy, staging, ops'), 15000);
  result.noteEdited = { ...edited, file: path.relative(world.workspace, edited.file) };
  step('note edited and saved from its tab');
  await page.mouse.move(1000, 450);
  await screenshot('note-edited-and-saved');

  // 13f. Changed by another program: the open (saved) tab reloads.
  const rewrite = (content) => {
    const json = JSON.parse(read(created.file));
    fs.writeFileSync(created.file, JSON.stringify({ ...json, content, updated_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }, null, 2) + '\n');
  };
  rewrite('Deploys go through the staging cluster first.\nThen promote to production.\nEdited by an agent.');
  await until('the tab reloaded', async () => (await noteText()).endsWith('Edited by an agent.'), 20000);
  step('open note reloaded after an outside change');
  await screenshot('note-reloaded-after-outside-change');

  // 13g. Unsaved edits over a note changed on disk: the save is refused and the file keeps the other change.
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' Mine.');
  await page.locator('.tab.active.dirty', { hasText: 'Deploy via staging.md' }).first().waitFor({ timeout: 10000 });
  await page.waitForTimeout(100);
  rewrite('Changed elsewhere.');
  await page.keyboard.press('Control+S');
  const refused = notification(/Failed to save 'Deploy via staging\.md'/);
  await refused.first().waitFor({ timeout: 20000 });
  result.noteConflict = (await text(refused.first())).slice(0, 400);
  check('the other change stays on disk', noteOnDisk(projectNotes, 'Deploy via staging').content === 'Changed elsewhere.');
  step('conflicting save refused');
  await screenshot('note-save-conflict');
  await palette('File: Revert File');
  await until('the tab shows the note on disk', async () => (await noteText()).endsWith('Changed elsewhere.')
    && (await page.locator('.tab.active.dirty').count()) === 0, 15000);
  check('revert left the file alone', noteOnDisk(projectNotes, 'Deploy via staging').content === 'Changed elsewhere.');
  await page.keyboard.press('Escape');
  step('reverted to the note on disk');

  // 13h. Delete a note from the view, after a modal confirmation.
  await contextMenu(notesRow('release_train').first(), 'Delete Note');
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'Delete the project note "release_train"?' });
  await dialog.first().waitFor({ timeout: 10000 });
  await screenshot('note-delete-confirm');
  await dialog.first().locator('.monaco-button', { hasText: /^Delete$/ }).first().click();
  await until('the note file deleted', () => !fs.existsSync(path.join(projectNotes, 'release_train.json')), 15000);
  await until('the note gone from the view', async () => (await notesRow('release_train').count()) === 0, 15000);
  check('the other notes stay', noteOnDisk(projectNotes, 'Deploy via staging') !== undefined
    && noteOnDisk(globalNotes, 'Ask before force-pushing to main.') !== undefined);
  step('note deleted after confirmation');
  await page.mouse.move(1000, 450);
  await screenshot('note-deleted');

  // 13i. Workspace symbols (Ctrl+T) find notes and open them as note documents.
  await palette('View: Close All Editors');
  await until('every editor closed', async () => (await page.locator('.tab').count()) === 0, 10000);
  await page.keyboard.press('Control+T');
  await quickInput.waitFor({ state: 'visible', timeout: 10000 });
  await quickInput.fill('#Deploy via');
  const symbolRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Deploy via staging' })
    .filter({ hasText: 'project note' });
  await symbolRow.first().waitFor({ timeout: 20000 });
  await screenshot('note-workspace-symbol');
  await symbolRow.first().click();
  await page.locator('.tab.active', { hasText: 'Deploy via staging.md' }).first().waitFor({ timeout: 15000 });
  await until('the note document from the symbol', async () => (await noteText()) === '---\ntags: deploy, staging, ops\n---\nChanged elsewhere.', 15000);
  step('workspace symbol opens the note document');

  // 13j. A name already taken: a one-line error, and the note on disk stays as it was.
  await openFile('packages/app/src/notes.md');
  await editorLine(2).click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await palette('Memory Lens: Create Note from Selection', { keepSelection: true });
  await scopeRows.filter({ hasText: 'Project note' }).first().click({ timeout: 15000 });
  await until('the suggested name', async () => (await quickInput.inputValue()) === 'Some other notes.', 15000);
  await quickInput.fill('Deploy via staging');
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: 'Tags, separated by commas' }).first().waitFor({ timeout: 10000 });
  await page.keyboard.press('Enter');
  const exists = notification("Create note failed: a project note named 'Deploy via staging' already exists");
  await exists.first().waitFor({ timeout: 20000 });
  check('the existing note is unchanged', noteOnDisk(projectNotes, 'Deploy via staging').content === 'Changed elsewhere.');
  step('create with a taken name refused');
  await screenshot('note-create-name-exists');

  // 14. The contributed settings, with their descriptions (the panel was hidden in step 13).
  // Machine-overridable settings (server command, global dir) sit in the Remote tab of code-server.
  await palette('Preferences: Open Settings (UI)');
  await page.locator('.settings-editor').first().waitFor({ timeout: 20000 });
  await page.keyboard.type('memoryLens');
  const settingItem = (title) => page.locator('.settings-editor .setting-item', { hasText: title });
  await settingItem('Debug').first().waitFor({ timeout: 20000 });
  // The list renders what is in view: scroll down to each setting in turn (they are listed in this order).
  const scrollTo = (what, found) => until(what, async () => {
    if (await found()) {
      return true;
    }
    const box = await page.locator('.settings-editor .settings-body').first().boundingBox();
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.6);
    await page.mouse.wheel(0, 200);
    return false;
  }, 20000);
  await screenshot('settings-user');
  for (const title of ['Debug', 'Filenames', 'Token Budget', 'Trace: Server']) {
    await scrollTo(`settings UI shows ${title}`, async () => await settingItem(title).count() > 0);
    step(`settings UI shows ${title}`);
  }
  await page.locator('.settings-editor .settings-tabs-widget .action-label', { hasText: 'Remote' }).first().click();
  await settingItem('Global Dir').first().waitFor({ timeout: 20000 });
  await scrollTo('the Notes: Layout and Notes: Global Dir settings',
    async () => await settingItem('Notes: Layout').count() > 0 && await settingItem('Notes: Global Dir').count() > 0);
  await screenshot('settings-remote');
  await scrollTo('the Server: Command setting', async () => await settingItem('Server: Command').count() > 0);
  await screenshot('settings-remote-server-command');

  // 15. With "memoryLens.save.preview" on, the lightbulb save is a change to review in the Refactor
  // Preview; the change applied is saved to disk, not left unsaved.
  // (Through the Settings editor: a settings.json written from outside waits on the file watcher.)
  const setSavePreview = async (on) => {
    await palette('Preferences: Open Settings (UI)');
    await page.locator('.settings-editor').first().waitFor({ timeout: 20000 });
    await page.keyboard.type('memoryLens.save.preview');
    const item = page.locator('.settings-editor .setting-item', { hasText: 'Save: Preview' }).first();
    await item.waitFor({ timeout: 20000 });
    const box = item.locator('.setting-value-checkbox').first();
    if (((await box.getAttribute('aria-checked')) === 'true') !== on) {
      await box.click();
    }
    await until('the Save: Preview setting', async () => ((await box.getAttribute('aria-checked')) === 'true') === on, 10000);
    await screenshot('save-preview-setting');
    await palette('View: Close Editor');
  };
  await setSavePreview(true);
  await openFile('packages/legacy/notes.md');
  const applyButton = page.locator('.monaco-button', { hasText: /^Apply$/ });
  // The server reads the changed setting shortly after VS Code does: ask until the action carries the edit.
  await until('the save action with a change preview', async () => {
    await editorLine(0).click();
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+End');
    await page.keyboard.press('Control+Period');
    const row = page.locator('.action-widget .monaco-list-row', { hasText: 'Save selection to project memory' });
    await row.first().waitFor({ timeout: 10000 });
    for (let i = 0; i < 10 && (await page.locator('.action-widget .monaco-list-row.focused', { hasText: 'Save selection to project memory' }).count()) === 0; i++) {
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
    if (await applyButton.first().waitFor({ timeout: 5000 }).then(() => true, () => false)) {
      return true;
    }
    // Saved at once (the setting not read yet): undo that save and try again.
    const saved = notification('Saved to project memory').filter({ hasText: 'Legacy notes' });
    await saved.first().locator('.monaco-button', { hasText: /^Undo$/ }).first().click();
    await until('the early save undone', () => !read(ws('GEMINI.md')).includes('Legacy notes'), 10000);
    return false;
  }, 60000);
  // Changes that need confirmation start unticked in VS Code's Refactor Preview: tick, then Apply.
  const tickBox = page.locator('.part.panel .monaco-list-row').first().locator('.monaco-checkbox, input[type=checkbox]').first();
  await tickBox.waitFor({ timeout: 10000 });
  await screenshot('save-preview-refactor-preview');
  await tickBox.click();
  await applyButton.first().click();
  await until('the previewed save on disk', () => read(ws('GEMINI.md')).includes('- Legacy notes.'), 20000);
  await until('no unsaved memory file after the previewed save',
    async () => (await page.locator('.tab.dirty', { hasText: 'GEMINI.md' }).count()) === 0, 10000);
  step('save.preview: the applied change is saved to disk');
  await screenshot('save-preview-applied-and-saved');

  // 16. Claude Code's view of a file: what loads at start, then what loads when Claude reads the
  // file, marked as such. The .claude/rules file whose `paths:` matches app.ts loads on read, with
  // its glob, in the effective memory document and in the Memory panel; for tool.py it does not.
  const onReadMarker = '<!-- Memory Lens: loads when Claude reads app.ts (paths: **/*.ts), not at start -->';
  const flat = (s) => s.replace(/\s+/g, ' ');
  await openFile('packages/web/src/app.ts');
  await palette('Memory Lens: Choose Agent…');
  const claudePick = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: /^Claude Code$/ }) }).first();
  await claudePick.waitFor({ timeout: 15000 });
  await claudePick.click();
  await page.locator('.statusbar-item', { hasText: /Claude Code · \d+ files? · ~\d+ tokens?/ }).first().waitFor({ timeout: 15000 });
  await palette('Memory Lens: Show Effective Memory');
  await page.locator('.tab.active', { hasText: 'Claude Code memory (app.ts)' }).first().waitFor({ timeout: 15000 });
  const claudeText = await until('the on-read part marked in the effective memory document', async () => {
    const t = flat(await renderedText(activeEditorLines()));
    return t.includes(onReadMarker) && t.includes('TypeScript rule: strict types everywhere.') && t;
  });
  check('the effective memory document starts with what loads at start',
    claudeText.startsWith('<!-- Memory Lens: loads at start -->') && claudeText.indexOf('Codex rule: run make check') < claudeText.indexOf(onReadMarker), claudeText);
  check('the on-read marker sits right above the rule, with its glob',
    claudeText.indexOf(onReadMarker) < claudeText.indexOf(`Contents of ${ws('.claude/rules/ts.md')}:`)
    && claudeText.indexOf(`Contents of ${ws('.claude/rules/ts.md')}:`) < claudeText.indexOf('TypeScript rule: strict types everywhere.'), claudeText);
  result.claudeOnRead = claudeText;
  step('Claude Code: the on-read part of app.ts is marked in the effective memory document');
  await screenshot('claude-on-read-effective-memory');
  if ((await notesHeader.getAttribute('aria-expanded')) === 'true') {
    await notesHeader.click();
  }
  if ((await header.getAttribute('aria-expanded')) !== 'true') {
    await header.click();
  }
  await page.locator('.tab', { hasText: /^app\.ts/ }).first().click();
  const ruleRow = await until('the on-read rule in the Memory panel', async () => {
    const l = await panelLabels();
    return l.find((x) => x.startsWith('.claude/rules/ts.md') && x.includes('on read (**/*.ts)'));
  }, 30000);
  result.claudePanel = await panelLabels();
  check('only the rule is on read in the panel', result.claudePanel.filter((l) => l.includes('on read')).length === 1, JSON.stringify(result.claudePanel));
  step(`Claude Code: the Memory panel marks the rule as on read (${ruleRow})`);
  await screenshot('claude-on-read-panel');
  await openFile('packages/web/src/tool.py');
  const pyPanel = await until('the Memory panel for tool.py', async () => {
    const l = await panelLabels();
    return l.some((x) => x.startsWith('AGENTS.md')) && !l.some((x) => x.startsWith('.claude/rules/ts.md') && !x.includes('not loaded')) && l;
  }, 30000);
  result.claudePanelPy = pyPanel;
  check('nothing loads on read for tool.py (the rule, if listed, is not loaded)', !pyPanel.some((l) => l.includes('on read')), JSON.stringify(pyPanel));
  await palette('Memory Lens: Show Effective Memory');
  await page.locator('.tab.active', { hasText: 'Claude Code memory (tool.py)' }).first().waitFor({ timeout: 15000 });
  const pyText = await until('the effective memory document of tool.py', async () => {
    const t = flat(await renderedText(activeEditorLines()));
    return t.includes('Codex rule: run make check') && t;
  });
  check('tool.py: no rule and no marker', !pyText.includes('TypeScript rule') && !pyText.includes('<!-- Memory Lens: loads'), pyText);
  step('Claude Code: tool.py gets no on-read part');
  await screenshot('claude-no-on-read-for-py');

  // 17. The Agents view: for the active file, every agent the server reports, each with the
  // instruction files it loads (at start or on read), may request or does not load, and why not on
  // hover; a click opens the file; the status bar counts the agents that load something. Checked
  // for app.ts and tool.py, which the scoped files (.claude/rules paths:, .github/instructions
  // applyTo, .cursor/rules globs) tell apart, beside packages/web's AGENTS.override.md.
  const agentsPane = page.locator('.pane:has(> .pane-header[aria-label^="Agents"])');
  const agentsHeader = agentsPane.locator('.pane-header').first();
  /** The rows of the Agents view, top to bottom: {level, name, description, expanded}. */
  const agentsRows = () => agentsPane.locator('.monaco-list-row').evaluateAll((rows) => rows
    .sort((a, b) => (parseFloat(a.style.top) || 0) - (parseFloat(b.style.top) || 0))
    .map((r) => ({
      level: Number(r.getAttribute('aria-level')),
      name: (r.querySelector('.label-name')?.textContent ?? '').trim(),
      description: (r.querySelector('.label-description')?.textContent ?? '').trim(),
      expanded: r.getAttribute('aria-expanded'),
    })));
  const agentRow = (label) => agentsPane.locator('.monaco-list-row[aria-level="1"]')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) }).first();
  /** AGENT's files as {name: description}, with that agent alone expanded. */
  const agentFiles = async (label) => {
    for (const r of await agentsRows()) {
      if (r.level === 1 && r.expanded === 'true' && r.name !== label) {
        await agentRow(r.name).click();
      }
    }
    return until(`the files of ${label} in the Agents view`, async () => {
      const rows = await agentsRows();
      const at = rows.findIndex((r) => r.level === 1 && r.name === label);
      if (at < 0) {
        return false;
      }
      if (rows[at].expanded !== 'true') {
        await agentRow(label).click();
        return false;
      }
      const next = rows.findIndex((r, i) => i > at && r.level === 1);
      const files = rows.slice(at + 1, next < 0 ? undefined : next);
      return files.length > 0 && Object.fromEntries(files.map((f) => [f.name, f.description]));
    }, 20000);
  };
  const loads = (d) => /^(loaded|on read)\b/.test(d ?? '');
  /** Every agent's files for the active file, the status bar's count checked against them. */
  const agentsMatrix = async (file) => {
    await until(`the Agents view for ${file}`, async () =>
      (await text(agentsPane.locator('.tree-explorer-viewlet-tree-view > .message').first()).catch(() => '')).includes(file)
      && (await agentsRows()).some((r) => r.level === 1), 30000);
    // How many agents the server reports, from the status bar item's label ("5 agents, 5 of 6 agents load ...").
    const total = await until('the agents status bar item\'s label', async () => {
      const label = await page.locator('.statusbar-item-label[aria-label*="agents load instructions"]').first()
        .getAttribute('aria-label').catch(() => '');
      const m = /\d+ of (\d+) agents? load/.exec(label ?? '');
      return m ? Number(m[1]) : false;
    }, 20000);
    // The message changes before the tree renders the new rows: wait until they stop changing and
    // every agent's row is rendered, the agents folded (the list renders only the rows in view).
    const agents = await until(`the agents for ${file} rendered`, async () => {
      const before = JSON.stringify(await agentsRows());
      await page.waitForTimeout(1000);
      const rows = await agentsRows();
      const top = rows.filter((r) => r.level === 1);
      const open = top.find((r) => r.expanded === 'true');
      if (open) { // folded, every agent's row fits in view
        await agentRow(open.name).click();
        return false;
      }
      return JSON.stringify(rows) === before && top.length === total && top;
    }, 30000);
    const matrix = {};
    for (const a of agents) {
      matrix[a.name] = await agentFiles(a.name);
    }
    // From each agent's summary ("5 not loaded · 2 loaded · 1 on read"), which stays in view
    // whichever agent is expanded: the rows of one expanded at the bottom may be scrolled away.
    const loading = agents.filter((a) => /(^|· )\d+ (loaded|on read)\b/.test(a.description)).length;
    const status = await until('the agents status bar item', async () => {
      const t = await text(page.locator('.statusbar-item', { hasText: /^\S*\s*\d+ agents?$/ }).first()).catch(() => '');
      return t.endsWith(`${loading} agent${loading === 1 ? '' : 's'}`) && t;
    }, 20000);
    return { agents: agents.map((a) => `${a.name} — ${a.description}`), matrix, status };
  };
  if ((await header.getAttribute('aria-expanded')) === 'true') {
    await header.click(); // the Memory panel folds away: the Agents view gets the room
  }
  if ((await agentsHeader.getAttribute('aria-expanded')) !== 'true') {
    await agentsHeader.click();
  }
  await openFile('packages/web/src/app.ts');
  const ts = await agentsMatrix('packages/web/src/app.ts');
  result.agentsViewTs = ts;
  const names = Object.keys(ts.matrix);
  check('the Agents view lists Gemini CLI, Claude Code and Codex', ['Gemini CLI', 'Claude Code', 'Codex'].every((n) => names.includes(n)),
    JSON.stringify(names));
  check('app.ts: the Claude rule whose paths: match is on read, with its glob',
    /^on read · \*\*\/\*\.ts/.test(ts.matrix['Claude Code']['.claude/rules/ts.md'] ?? ''), JSON.stringify(ts.matrix['Claude Code']));
  check('app.ts: Codex loads AGENTS.override.md and not the AGENTS.md beside it',
    loads(ts.matrix.Codex['packages/web/AGENTS.override.md']) && /^not loaded/.test(ts.matrix.Codex['packages/web/AGENTS.md'] ?? ''),
    JSON.stringify(ts.matrix.Codex));
  check('app.ts: Gemini CLI loads the project GEMINI.md', loads(ts.matrix['Gemini CLI']['GEMINI.md']), JSON.stringify(ts.matrix['Gemini CLI']));
  step(`Agents view for app.ts: ${names.join(', ')}; status bar "${ts.status}"`);
  await agentFiles('Claude Code');
  await screenshot('agents-view-app-ts');
  // The reason on hover, and a click opens the file.
  await agentFiles('Codex');
  const skipped = agentsPane.locator('.monaco-list-row[aria-level="2"]', { has: page.locator('.label-name', { hasText: /^packages\/web\/AGENTS\.md$/ }) }).first();
  await hoverUntil(skipped, page.locator('.monaco-hover, .workbench-hover', { hasText: 'Codex: not loaded' }).first(), 0.3);
  step('Agents view: the reason a file is not loaded shows on hover');
  await screenshot('agents-view-hover-reason');
  await page.mouse.move(1000, 450);
  await skipped.click();
  await page.locator('.tab.active', { hasText: /^AGENTS\.md/ }).first().waitFor({ timeout: 15000 });
  step('Agents view: a click opens the file');
  await openFile('packages/web/src/tool.py');
  const py = await agentsMatrix('packages/web/src/tool.py');
  result.agentsViewPy = py;
  check('tool.py: the Claude rule is not on read', !/^on read/.test(py.matrix['Claude Code']['.claude/rules/ts.md'] ?? ''),
    JSON.stringify(py.matrix['Claude Code']));
  check('tool.py: Codex still loads AGENTS.override.md', loads(py.matrix.Codex['packages/web/AGENTS.override.md']), JSON.stringify(py.matrix.Codex));
  // Files scoped to *.ts: no agent loads them for tool.py; for app.ts each agent that reads them has a status.
  for (const scoped of ['.claude/rules/ts.md', '.github/instructions/ts.instructions.md', '.cursor/rules/ts.mdc']) {
    const forPy = Object.entries(py.matrix).filter(([, files]) => loads(files[scoped])).map(([a]) => a);
    check(`tool.py: no agent loads ${scoped}`, forPy.length === 0, JSON.stringify(forPy));
  }
  step(`Agents view for tool.py; status bar "${py.status}"`);
  await agentFiles('Claude Code');
  await screenshot('agents-view-tool-py');

  result.ok = true;
}

async function run() {
  fs.mkdirSync(out, { recursive: true });
  fs.mkdirSync(world.profile, { recursive: true });
  const launch = (profile) => chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1440, height: 900 },
    env: { ...process.env, HOME: world.home, XDG_CONFIG_HOME: path.join(world.home, '.config'), XDG_CACHE_HOME: path.join(world.home, '.cache') },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    timeout: 120000,
  });
  // A loaded 2-core machine occasionally fails a first launch: try twice.
  const ctx = await launch(world.profile).catch(async (err) => {
    console.error(`chromium launch failed, retrying: ${String(err)}`);
    await new Promise((r) => setTimeout(r, 3000));
    return launch(`${world.profile}-retry`);
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') {
      fs.appendFileSync(path.join(out, 'browser-console-errors.log'), m.text() + '\n');
    }
  });
  try {
    await main(page);
  } catch (err) {
    result.error = String((err && err.stack) || err);
    console.error(result.error);
    await page.screenshot({ path: path.join(out, 'failure.png') }).catch(() => undefined);
    fs.writeFileSync(path.join(out, 'failure-dom.html'), await page.content().catch(() => ''));
  } finally {
    result.seconds = (Date.now() - t0) / 1000;
    fs.writeFileSync(path.join(out, 'result.json'), JSON.stringify(result, null, 2));
    await ctx.close().catch(() => undefined);
  }
  console.log(result.ok ? `e2e passed in ${result.seconds}s` : 'e2e FAILED');
  process.exit(result.ok ? 0 : 1);
}

run().catch((err) => {
  console.error(`e2e driver error: ${String((err && err.stack) || err)}`);
  result.error = String(err);
  fs.writeFileSync(path.join(out, 'result.json'), JSON.stringify(result, null, 2));
  process.exit(1);
});
