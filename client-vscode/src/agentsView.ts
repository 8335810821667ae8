/**
 * The Agents view (a tree view beside the Memory panel) and its status bar item: for the active
 * editor's file, each agent Memory Lens knows and every instruction file it loads, loads when it
 * reads the file, may request, or does not load (and why), from the server's `memory/explain`.
 * It follows the Memory panel's target and refreshes with it (editor switches, `memory/didChange`,
 * saves, server restarts; debounced there).
 */

import * as os from 'node:os';
import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import {
  type AgentRow, agentRows, agentsStatusText, agentsStatusTooltip, explainErrorMessage, type FileRow, parseExplain,
} from './agentsMatrix';
import type { MemoryModel, MemorySnapshot } from './model';
import { AGENTS_VIEW_ID, type ExplainResult } from './protocol';
import { errorMessage, type MemoryServer } from './server';

type AgentsNode = { kind: 'agent'; row: AgentRow } | { kind: 'file'; row: FileRow };

export class AgentsView implements vscode.TreeDataProvider<AgentsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<AgentsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<AgentsNode>;
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: vscode.Disposable;
  private rows: AgentRow[] = [];
  private generation = 0;

  constructor(private readonly server: MemoryServer, model: MemoryModel) {
    this.view = vscode.window.createTreeView(AGENTS_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.item = vscode.window.createStatusBarItem('memoryLens.agents', vscode.StatusBarAlignment.Right, 99);
    this.item.name = 'Memory Lens Agents';
    this.item.command = `${AGENTS_VIEW_ID}.focus`;
    this.subscription = model.onDidChange((snapshot) => void this.refresh(snapshot));
    void this.refresh(model.snapshot);
  }

  getTreeItem(node: AgentsNode): vscode.TreeItem {
    return node.kind === 'agent' ? agentItem(node.row) : fileItem(node.row);
  }

  getChildren(node?: AgentsNode): AgentsNode[] {
    if (!node) {
      return this.rows.map((row) => ({ kind: 'agent', row }));
    }
    return node.kind === 'agent' ? node.row.files.map((row) => ({ kind: 'file', row })) : [];
  }

  /** Ask the server for SNAPSHOT's target; a failure is one line in the view, the status bar item hidden. */
  async refresh(snapshot: MemorySnapshot | undefined): Promise<void> {
    const generation = ++this.generation;
    const target = snapshot?.target;
    if (!target || !this.server.running || target.scheme !== 'file') {
      this.show(generation, [], snapshot?.error ?? (target?.scheme === 'untitled'
        ? 'Save the file to see which agents read which instruction files for it.'
        : 'Open a file to see which agents read which instruction files for it.'));
      return;
    }
    try {
      const result = parseExplain(await this.server.explain(target.toString()));
      const root = vscode.workspace.getWorkspaceFolder(target)?.uri.fsPath;
      const rows = agentRows(result, root, os.homedir());
      this.show(generation, rows, rows.length ? undefined : 'No agents to ask about.', result);
    } catch (err) {
      const code = err instanceof ResponseError ? err.code : undefined;
      const message = explainErrorMessage(code, errorMessage(err), target.path);
      this.server.log.warn(`Agents view: ${message}`);
      this.show(generation, [], message);
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.view.dispose();
    this.item.dispose();
    this.changed.dispose();
  }

  private show(generation: number, rows: AgentRow[], message: string | undefined,
    result?: ExplainResult): void {
    if (generation !== this.generation) {
      return; // a newer refresh started meanwhile
    }
    this.rows = rows;
    this.view.message = message ?? (result ? `Agents for ${vscode.workspace.asRelativePath(result.path)}` : undefined);
    if (result) {
      this.item.text = agentsStatusText(result);
      this.item.tooltip = agentsStatusTooltip(result);
      this.item.show();
    } else {
      this.item.hide();
    }
    this.changed.fire(undefined);
  }
}

function agentItem(row: AgentRow): vscode.TreeItem {
  // An agent that loads nothing here starts collapsed: its files are all "why not".
  const item = new vscode.TreeItem(row.label, !row.files.length ? vscode.TreeItemCollapsibleState.None
    : row.loadsSomething ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
  item.id = `agent:${row.agent}`;
  item.description = row.description;
  item.tooltip = row.tooltip;
  item.iconPath = new vscode.ThemeIcon(row.loadsSomething ? 'account' : 'circle-slash');
  item.contextValue = 'agent';
  return item;
}

function fileItem(row: FileRow): vscode.TreeItem {
  const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
  const uri = row.uri ? vscode.Uri.parse(row.uri) : vscode.Uri.file(row.path);
  item.id = `file:${row.agent}:${row.path}`;
  item.description = row.description;
  item.tooltip = row.tooltip;
  item.iconPath = new vscode.ThemeIcon(row.icon, row.color ? new vscode.ThemeColor(row.color) : undefined);
  item.resourceUri = uri;
  item.contextValue = `agentFile.${row.status}`;
  item.command = { title: 'Open', command: 'vscode.open', arguments: [uri] };
  item.accessibilityInformation = { label: `${row.label}, ${row.description}` };
  return item;
}
