/**
 * The Memory panel (a tree view in the Explorer): the sources of the active file's memory
 * chain, general to specific, each with its entries. Everything shown comes from the server.
 */

import * as os from 'node:os';
import * as vscode from 'vscode';
import { agentLabel, entriesOf, entryLabel, sourceLabel, summary } from './labels';
import type { MemoryModel, MemorySnapshot } from './model';
import { CLIENT_COMMANDS, type ListedEntry, type MemorySource, PANEL_VIEW_ID } from './protocol';

export type PanelNode =
  | { kind: 'source'; source: MemorySource; projectRoot: string | null; entries: ListedEntry[] }
  | { kind: 'entry'; entry: ListedEntry };

export class MemoryPanel implements vscode.TreeDataProvider<PanelNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<PanelNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<PanelNode>;
  private readonly subscription: vscode.Disposable;
  private snapshot: MemorySnapshot | undefined;

  constructor(model: MemoryModel) {
    this.view = vscode.window.createTreeView(PANEL_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.subscription = model.onDidChange((snapshot) => this.show(snapshot));
    this.show(model.snapshot);
  }

  getTreeItem(node: PanelNode): vscode.TreeItem {
    return node.kind === 'source' ? sourceItem(node) : entryItem(node.entry);
  }

  getChildren(node?: PanelNode): PanelNode[] {
    const memory = this.snapshot?.memory;
    if (!memory) {
      return [];
    }
    if (!node) {
      return memory.sources.map((source) => ({
        kind: 'source', source, projectRoot: memory.projectRoot,
        entries: entriesOf(this.snapshot?.entries ?? [], source.path),
      }));
    }
    return node.kind === 'source' ? node.entries.map((entry) => ({ kind: 'entry', entry })) : [];
  }

  dispose(): void {
    this.subscription.dispose();
    this.view.dispose();
    this.changed.dispose();
  }

  private show(snapshot: MemorySnapshot | undefined): void {
    this.snapshot = snapshot;
    const memory = snapshot?.memory;
    this.view.description = memory ? summary(memory) : undefined;
    if (!snapshot) {
      this.view.message = 'Open a file to see the memory agents load for it.';
    } else if (snapshot.error) {
      this.view.message = snapshot.error;
    } else if (memory && memory.sources.length === 0) {
      this.view.message = `No memory files apply to ${vscode.workspace.asRelativePath(snapshot.target)}. ` +
        'Use "Memory Lens: Remember…" to start one.';
    } else {
      this.view.message = memory
        ? `${agentLabel(snapshot.agent)} memory for ${vscode.workspace.asRelativePath(snapshot.target)}` : undefined;
    }
    this.changed.fire(undefined);
  }
}

function sourceItem(node: Extract<PanelNode, { kind: 'source' }>): vscode.TreeItem {
  const { source } = node;
  const { label, description, tooltip } = sourceLabel(source, node.projectRoot, os.homedir());
  const state = node.entries.length > 0
    ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None;
  const item = new vscode.TreeItem(label, state);
  item.id = `source:${source.uri}`;
  item.description = description;
  item.tooltip = tooltip;
  item.resourceUri = vscode.Uri.parse(source.uri);
  item.contextValue = `source.${source.scope}${source.readable ? '' : '.unreadable'}`;
  item.iconPath = source.loaded === false
    ? new vscode.ThemeIcon('circle-slash')
    : source.when === 'on-read'
    ? new vscode.ThemeIcon('eye')
    : !source.readable
    ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'))
    : new vscode.ThemeIcon(source.scope === 'global' ? 'globe' : 'book');
  item.command = { title: 'Open', command: 'vscode.open', arguments: [item.resourceUri] };
  item.accessibilityInformation = { label: `${source.scope} memory ${label}, ${description}` };
  return item;
}

function entryItem(entry: ListedEntry): vscode.TreeItem {
  const item = new vscode.TreeItem(entryLabel(entry.text), vscode.TreeItemCollapsibleState.None);
  item.id = `entry:${entry.uri}:${entry.line}:${entry.text.length}`;
  item.description = `line ${entry.line}`;
  item.tooltip = new vscode.MarkdownString().appendText(entry.text);
  item.contextValue = `entry.${entry.scope}`;
  item.iconPath = new vscode.ThemeIcon('note');
  item.command = { title: 'Open Entry', command: CLIENT_COMMANDS.openEntry, arguments: [entry] };
  return item;
}
