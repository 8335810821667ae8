/**
 * The palette and panel commands. Each one asks the server to do the work (save, remove, move,
 * refresh) and shows the outcome; none of them reads or writes memory files itself.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { configuredAgent, type EffectiveMemoryDocuments } from './effectiveDocument';
import { globalMemoryPath } from './effectiveQuery';
import {
  AGENT_LABELS, agentLabel, displayPath, entryLabel, savedMessage, scopeName, stripMemoryPrefix, validateMemoryText,
} from './labels';
import type { MemoryModel } from './model';
import type { PanelNode } from './panel';
import {
  type AgentName, CLIENT_COMMANDS, CMD_MOVE, CMD_REFRESH, CMD_REMOVE, CMD_SAVE, EFFECTIVE_SCHEME, type ListedEntry, type MoveArgs,
  type RefreshResult, type RemoveResult, type SaveArgs, type SaveResult, SETTINGS_SECTION, type Scope,
} from './protocol';
import { errorMessage, type MemoryServer, SAVE_APPLIED_EDIT, saveAppliedEdit, serverSettings } from './server';

interface ScopeItem extends vscode.QuickPickItem { scope: Scope }

/** What each agent loads, in the agent picker (docs/agents.md has the rules). */
const AGENT_DETAILS: Readonly<Record<AgentName, string>> = {
  gemini: 'GEMINI.md files from ~/.gemini and the project, with @imports expanded',
  claude: 'CLAUDE.md tiers (user, project, local), AGENTS.md where there is no CLAUDE.md, @imports',
  codex: 'AGENTS.override.md / AGENTS.md from $CODEX_HOME and root to here, cut at project_doc_max_bytes',
  wave: '~/.wave/memory.md and the AGENTS.md of the working directory',
  cursor: '.cursor/rules (always, by globs for this file, requestable, manual), AGENTS.md, .cursorrules',
  copilot: 'copilot-instructions.md, AGENTS.md / CLAUDE.md / GEMINI.md from the git root to here, *.instructions.md by applyTo',
  'copilot-vscode': 'Copilot Chat in VS Code, by its chat.* settings: copilot-instructions.md, AGENTS.md, CLAUDE.md, *.instructions.md by applyTo',
};

export class MemoryCommands {
  constructor(
    private readonly server: MemoryServer,
    private readonly model: MemoryModel,
    private readonly documents: EffectiveMemoryDocuments,
  ) {}

  register(): vscode.Disposable[] {
    const c = CLIENT_COMMANDS;
    const r = vscode.commands.registerCommand;
    return [
      r(c.remember, () => this.remember()),
      r(c.saveSelectionToProject, () => this.saveSelection('project')),
      r(c.saveSelectionToGlobal, () => this.saveSelection('global')),
      r(c.showEffectiveMemory, (uri?: vscode.Uri) => this.showEffective(uri)),
      r(c.toggleAnnotated, (uri?: vscode.Uri) => this.documents.toggleAnnotated(uri)),
      r(c.chooseAgent, () => this.chooseAgent()),
      r(c.openGlobalMemoryFile, () => this.openGlobalMemoryFile()),
      r(c.refresh, () => this.refresh()),
      r(c.restartServer, () => this.restart()),
      r(c.showLog, () => this.server.log.show()),
      r(c.openEntry, (entry?: ListedEntry) => this.openEntry(entry)),
      r(c.deleteEntry, (node?: PanelNode) => this.deleteEntry(node)),
      r(c.moveEntryToGlobal, (node?: PanelNode) => this.moveEntry(node, 'global')),
      r(c.moveEntryToProject, (node?: PanelNode) => this.moveEntry(node, 'project')),
      r(SAVE_APPLIED_EDIT.project, () => saveAppliedEdit('project', this.server.log)),
      r(SAVE_APPLIED_EDIT.global, () => saveAppliedEdit('global', this.server.log)),
      // A save code action (the server's save command) is shown as the palette's saves are.
      this.server.onDidSaveEntry((result) => {
        this.showSaved(result);
        this.model.scheduleRefresh(0);
      }),
    ];
  }

  /** The `#` quick memory: type the text (a leading `#` is fine), pick project or global, save. */
  async remember(): Promise<void> {
    const text = await vscode.window.showInputBox({
      title: 'Memory Lens: Remember',
      prompt: 'What should agents remember? A leading # is fine, as in an agent\'s chat.',
      placeHolder: '# Use pnpm instead of npm',
      validateInput: validateMemoryText,
      ignoreFocusOut: true,
    });
    if (text === undefined) {
      return;
    }
    const scope = await this.pickScope(stripMemoryPrefix(text));
    if (scope) {
      await this.save({ text, scope, uri: this.model.targetUri?.toString() });
    }
  }

  async saveSelection(scope: Scope): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showWarningMessage('Memory Lens: open a file and select the text to save.');
      return;
    }
    const selected = editor.selections.filter((s) => !s.isEmpty).map((s) => editor.document.getText(s));
    const text = selected.length > 0 ? selected.join('\n') : editor.document.lineAt(editor.selection.active.line).text;
    if (validateMemoryText(text)) {
      void vscode.window.showWarningMessage('Memory Lens: select the text to save first.');
      return;
    }
    // From the effective memory document, save for the file it shows.
    const uri = editor.document.uri.scheme === EFFECTIVE_SCHEME ? this.model.targetUri : editor.document.uri;
    await this.save({ text, scope, uri: uri?.toString() });
  }

  async showEffective(uri?: vscode.Uri): Promise<void> {
    const target = uri instanceof vscode.Uri ? uri : this.model.targetUri;
    if (!target) {
      void vscode.window.showInformationMessage('Memory Lens: open a file or a folder to see its effective memory.');
      return;
    }
    await this.documents.open(target);
  }

  /**
   * "Choose Agent…": a quick pick of the agents; the choice goes to `memoryLens.agent` (user
   * settings), which switches the effective memory documents, the panel and the status bar.
   */
  async chooseAgent(): Promise<void> {
    const current = configuredAgent();
    const items = (Object.keys(AGENT_LABELS) as AgentName[]).map((agent) => ({
      label: agentLabel(agent), agent,
      description: agent === current ? 'current' : undefined,
      detail: AGENT_DETAILS[agent],
    }));
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Memory Lens: whose memory to show', placeHolder: `Showing ${agentLabel(current)}'s memory; choose an agent`,
    });
    if (!picked || picked.agent === current) {
      return;
    }
    await vscode.workspace.getConfiguration(SETTINGS_SECTION).update('agent', picked.agent, vscode.ConfigurationTarget.Global);
  }

  async openGlobalMemoryFile(): Promise<void> {
    const settings = serverSettings(this.model.targetUri);
    // Gemini CLI's global file (an agent's view names its own user tier instead).
    const reported = this.model.snapshot?.memory?.sources.find((s) => s.scope === 'global' && s.tier === undefined);
    const file = reported?.path ?? globalMemoryPath(settings.globalDir, process.env, os.homedir(), settings.filenames, path.sep);
    if (fs.existsSync(file)) {
      await vscode.window.showTextDocument(vscode.Uri.file(file));
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file).with({ scheme: 'untitled' }));
    void vscode.window.showInformationMessage(`Memory Lens: ${file} does not exist yet; it is created when you save.`);
  }

  async refresh(): Promise<void> {
    await this.run('Refresh', async () => {
      const result = await this.server.command<RefreshResult>(CMD_REFRESH, {});
      vscode.window.setStatusBarMessage(`Memory Lens: ${result?.files ?? 0} memory file(s) found`, 4000);
    });
    this.documents.refreshAll();
    await this.model.refresh();
  }

  async restart(): Promise<void> {
    if (await this.server.restart()) {
      vscode.window.setStatusBarMessage('Memory Lens: language server restarted', 4000);
    }
  }

  async openEntry(entry?: ListedEntry): Promise<void> {
    if (!entry) {
      return;
    }
    const first = Math.max(0, entry.line - 1);
    const range = entry.range
      ? new vscode.Range(entry.range.start.line, entry.range.start.character, entry.range.end.line, entry.range.end.character)
      : new vscode.Range(first, 0, Math.max(first, entry.endLine - 1), Number.MAX_SAFE_INTEGER);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(entry.uri));
    const editor = await vscode.window.showTextDocument(doc, { selection: doc.validateRange(range) });
    editor.revealRange(editor.selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  async deleteEntry(node?: PanelNode): Promise<void> {
    const entry = node?.kind === 'entry' ? node.entry : undefined;
    if (!entry) {
      return;
    }
    const where = displayPath(entry.path, this.model.snapshot?.memory?.projectRoot, os.homedir());
    const choice = await vscode.window.showWarningMessage(
      `Delete "${entryLabel(entry.text)}" from ${where}?`,
      { modal: true, detail: `The entry is removed from ${entry.path} (line ${entry.line}).` },
      'Delete',
    );
    if (choice !== 'Delete') {
      return;
    }
    await this.run('Delete entry', async () => {
      const result = await this.server.command<RemoveResult>(CMD_REMOVE, { uri: entry.uri, line: entry.line });
      vscode.window.setStatusBarMessage(
        `Memory Lens: deleted "${entryLabel(result.text)}" from ${scopeName(result.scope)}`, 5000);
    });
    this.model.scheduleRefresh(0);
  }

  async moveEntry(node: PanelNode | undefined, scope: Scope): Promise<void> {
    const entry = node?.kind === 'entry' ? node.entry : undefined;
    if (!entry) {
      return;
    }
    await this.run(`Move to ${scopeName(scope)}`, async () => {
      // The destination project is that of the file being viewed (a global entry has none of its own).
      const args: MoveArgs = { uri: entry.uri, line: entry.line, scope, contextUri: this.model.targetUri?.toString() };
      const result = await this.server.command<SaveResult>(CMD_MOVE, args);
      const where = `${displayPath(result.path, this.model.snapshot?.memory?.projectRoot, os.homedir())}:${result.line}`;
      void vscode.window.showInformationMessage(`Memory Lens: moved "${entryLabel(result.text)}" to ${scopeName(scope)} (${where}).`);
    });
    this.model.scheduleRefresh(0);
  }

  private async pickScope(text: string): Promise<Scope | undefined> {
    const memory = this.model.snapshot?.memory;
    const settings = serverSettings(this.model.targetUri);
    const home = os.homedir();
    const projectFile = memory?.projectRoot ? path.join(memory.projectRoot, settings.filenames[0] ?? 'GEMINI.md') : undefined;
    const globalFile = globalMemoryPath(settings.globalDir, process.env, home, settings.filenames, path.sep);
    const items: ScopeItem[] = [
      {
        label: '$(book) Project memory', scope: 'project',
        description: projectFile ? displayPath(projectFile, undefined, home) : 'no project here (no .git found above the file)',
      },
      { label: '$(globe) User (global) memory', scope: 'global', description: displayPath(globalFile, undefined, home) },
    ];
    const picked = await vscode.window.showQuickPick(items, {
      title: `Remember "${entryLabel(text, 60)}" in…`,
      placeHolder: 'Project memory applies to this project; user memory to every project',
      ignoreFocusOut: true,
    });
    return picked?.scope;
  }

  private async save(args: SaveArgs): Promise<void> {
    await this.run('Save', async () => {
      this.showSaved(await this.server.command<SaveResult>(CMD_SAVE, args));
    });
    this.model.scheduleRefresh(0);
  }

  /** "Saved to … memory: FILE:LINE" with Undo (a new entry only) and Open. */
  private showSaved(result: SaveResult): void {
    const message = savedMessage(result, this.model.snapshot?.memory?.projectRoot, os.homedir());
    const actions = result.added ? ['Undo', 'Open'] : ['Open'];
    void vscode.window.showInformationMessage(`Memory Lens: ${message}`, ...actions).then(async (choice) => {
      if (choice === 'Open') {
        await this.openEntry({ ...result, endLine: result.line });
      } else if (choice === 'Undo') {
        await this.undoSave(result);
      }
    });
  }

  /** Remove exactly the entry RESULT's save added, if it is still there (the server checks its text). */
  private async undoSave(result: SaveResult): Promise<void> {
    await this.run('Undo save', async () => {
      const removed = await this.server.command<RemoveResult>(CMD_REMOVE, { uri: result.uri, line: result.line, text: result.text });
      const where = displayPath(removed.path, this.model.snapshot?.memory?.projectRoot, os.homedir());
      vscode.window.setStatusBarMessage(`Memory Lens: removed "${entryLabel(removed.text)}" from ${where}`, 5000);
    });
    this.model.scheduleRefresh(0);
  }

  /** Run ACTION; show a failure as one line naming the action. */
  private async run(action: string, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (err) {
      this.server.log.error(`${action}: ${errorMessage(err)}`);
      void vscode.window.showErrorMessage(`Memory Lens: ${action} failed: ${errorMessage(err)}`);
    }
  }
}
