/**
 * The effective memory document: a read-only virtual document (`memory-lens:` scheme) with the
 * merged text the server returns for a file, or Gemini CLI's annotated form (in Claude Code's view,
 * a marker line above each part that loads only when Claude reads the file). It refreshes on
 * every `memory/didChange` and on server restarts.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { agentLabel, effectiveTitle, parseAgent } from './labels';
import { formatEffectiveQuery, parseEffectiveQuery } from './effectiveQuery';
import { entryLinks, sourceSections } from './effectiveLinks';
import { markOnRead } from './onRead';
import { type AgentName, CMD_LIST, EFFECTIVE_SCHEME, type ListArgs, type ListedEntry, SETTINGS_SECTION } from './protocol';
import { errorMessage, type MemoryServer } from './server';

export class EffectiveMemoryDocuments implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider,
  vscode.FoldingRangeProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly server: MemoryServer) {
    this.subscriptions = [
      vscode.workspace.registerTextDocumentContentProvider(EFFECTIVE_SCHEME, this),
      vscode.languages.registerDocumentLinkProvider({ scheme: EFFECTIVE_SCHEME }, this),
      vscode.languages.registerFoldingRangeProvider({ scheme: EFFECTIVE_SCHEME }, this),
      server.onDidChangeMemory(() => this.refreshAll()),
      server.onDidChangeRunning((running) => { if (running) { this.refreshAll(); } }),
    ];
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const doc = parseEffectiveQuery(uri.query);
    if (!doc) {
      return '<!-- Memory Lens: this document does not say which file it is for. -->\n';
    }
    try {
      const memory = await this.server.effective(doc.target, doc.annotated, doc.agent);
      const text = doc.annotated ? memory.annotated ?? memory.text : memory.text;
      const target = vscode.Uri.parse(doc.target);
      if (text === '') {
        return `<!-- Memory Lens: no memory applies to ${target.fsPath}. -->\n`;
      }
      // Claude Code's view: what loads only when Claude reads the file is marked as such.
      return markOnRead(text, memory.sources, path.basename(target.path)) + '\n';
    } catch (err) {
      return `<!-- Memory Lens: could not load the effective memory: ${errorMessage(err)} -->\n`;
    }
  }

  /**
   * In the annotated form: each source path (on both markers) links to its file, and each entry
   * to its line there (the server's `list` of the chain says where each entry is).
   */
  async provideDocumentLinks(document: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.DocumentLink[]> {
    const lines = document.getText().split(/\r?\n/);
    const sections = sourceSections(lines);
    const doc = parseEffectiveQuery(document.uri.query);
    if (sections.length === 0 || !doc) {
      return [];
    }
    const links: vscode.DocumentLink[] = [];
    const add = (line: number, start: number, end: number, file: string, tooltip: string, fileLine?: number) => {
      const target = vscode.Uri.file(file).with(fileLine ? { fragment: `L${fileLine}` } : {});
      const link = new vscode.DocumentLink(new vscode.Range(line, start, line, end), target);
      link.tooltip = tooltip;
      links.push(link);
    };
    for (const s of sections) {
      add(s.start, s.pathStart, s.pathStart + s.path.length, s.path, `Open ${s.path}`);
      if (s.endPathStart !== undefined) {
        add(s.end, s.endPathStart, s.endPathStart + s.path.length, s.path, `Open ${s.path}`);
      }
    }
    let entries: ListedEntry[] = [];
    try {
      const args: ListArgs = { scope: 'all', uri: doc.target };
      entries = (await this.server.command<ListedEntry[] | null>(CMD_LIST, args)) ?? [];
    } catch (err) {
      this.server.log.warn(`Links of the effective memory: ${errorMessage(err)}`);
    }
    if (token.isCancellationRequested) {
      return links;
    }
    for (const e of entryLinks(lines, sections, entries)) {
      add(e.line, e.startChar, e.endChar, e.path, `Open ${path.basename(e.path)} at line ${e.sourceLine}`, e.sourceLine);
    }
    return links;
  }

  /** In the annotated form, each source's block folds. */
  provideFoldingRanges(document: vscode.TextDocument): vscode.FoldingRange[] {
    return sourceSections(document.getText().split(/\r?\n/))
      .filter((s) => s.end > s.start)
      .map((s) => new vscode.FoldingRange(s.start, s.end, vscode.FoldingRangeKind.Region));
  }

  /** Open the effective memory of TARGET in the active editor group (read-only), in AGENT's view. */
  async open(target: vscode.Uri, annotated = false, agent: AgentName = configuredAgent()): Promise<vscode.TextEditor> {
    const uri = effectiveUri(target, annotated, agent);
    const doc = await vscode.workspace.openTextDocument(uri); // `.md` path: shown as Markdown
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Switch the active effective memory document between the merged and the annotated form. */
  async toggleAnnotated(uri: vscode.Uri | undefined): Promise<void> {
    const current = uri ?? vscode.window.activeTextEditor?.document.uri;
    const doc = current?.scheme === EFFECTIVE_SCHEME ? parseEffectiveQuery(current.query) : undefined;
    if (!current || !doc) {
      void vscode.window.showInformationMessage('Open an effective memory document first ("Memory Lens: Show Effective Memory").');
      return;
    }
    if (doc.agent && doc.agent !== 'gemini') {
      void vscode.window.showInformationMessage(
        `Memory Lens: the annotated form is Gemini CLI's only; ${agentLabel(doc.agent)}'s view lists its sources in the Memory panel.`);
      return;
    }
    await this.open(vscode.Uri.parse(doc.target), !doc.annotated, doc.agent);
    const old = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === current.toString());
    await vscode.window.tabGroups.close(old);
  }

  /**
   * Show every open effective memory document in AGENT's view: each tab in another agent's view is
   * replaced by the same file's document for AGENT (the annotated form is Gemini CLI's only).
   */
  async switchAgent(agent: AgentName): Promise<void> {
    // The URIs first (Tab objects go stale as tabs open and close); the active tab last, so it stays active.
    const open = vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => ({ tab: t, group: g })))
      .filter(({ tab }) => tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === EFFECTIVE_SCHEME)
      .map(({ tab, group }) => ({
        uri: (tab.input as vscode.TabInputText).uri.toString(), column: group.viewColumn,
        active: tab.isActive && group.isActive,
      }))
      .sort((x, y) => Number(x.active) - Number(y.active));
    for (const { uri, column, active } of open) {
      const doc = parseEffectiveQuery(vscode.Uri.parse(uri).query);
      if (!doc || (doc.agent ?? 'gemini') === agent) {
        continue;
      }
      const next = effectiveUri(vscode.Uri.parse(doc.target), doc.annotated && agent === 'gemini', agent);
      try {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(next),
          { preview: false, viewColumn: column, preserveFocus: !active });
        const old = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
          .filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri);
        await vscode.window.tabGroups.close(old);
      } catch (err) {
        this.server.log.warn(`Switching ${uri} to ${agentLabel(agent)}: ${errorMessage(err)}`);
      }
    }
  }

  /** Reload every effective memory document that is open in a tab. */
  refreshAll(): void {
    const open = new Set<string>();
    for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
      if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === EFFECTIVE_SCHEME) {
        open.add(tab.input.uri.toString());
      }
    }
    for (const uri of open) {
      this.changed.fire(vscode.Uri.parse(uri));
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) {
      s.dispose();
    }
    this.changed.dispose();
  }
}

export function effectiveUri(target: vscode.Uri, annotated: boolean, agent: AgentName = 'gemini'): vscode.Uri {
  const name = target.scheme === 'file' ? path.basename(target.fsPath) : target.path.split('/').pop() ?? '';
  const shownAnnotated = annotated && agent === 'gemini';
  return vscode.Uri.from({
    scheme: EFFECTIVE_SCHEME,
    path: '/' + effectiveTitle(name, shownAnnotated, agentLabel(agent)),
    query: formatEffectiveQuery({ target: target.toString(), annotated: shownAnnotated, agent }),
  });
}

/** The agent whose view the effective memory documents, the panel and the status bar show (`memoryLens.agent`). */
export function configuredAgent(): AgentName {
  return parseAgent(vscode.workspace.getConfiguration(SETTINGS_SECTION).get('agent'));
}
