/**
 * The Memory Notes view (a tree view in the Explorer, beside the Memory panel): the notes of the
 * active file's project and the global notes, grouped by scope, each with its tags; or, while a
 * search is active, the notes that match it, best first. Pages come from `notes.list` /
 * `notes.search`; the view refreshes on `memory/notesDidChange`, editor switches, setting changes
 * and server restarts.
 */

import * as os from 'node:os';
import * as vscode from 'vscode';
import type { MemoryModel } from './model';
import { groupLabel, groupNotes, moreLabel, noteDescription, notesViewMessage, noteTooltip } from './noteLabels';
import {
  CLIENT_COMMANDS, CMD_NOTES_LIST, CMD_NOTES_SEARCH, type NoteProblem, type NotesListArgs, type NotesPage,
  type NoteSummary, NOTES_SEARCH_CONTEXT, NOTES_VIEW_ID, type NotesSearchArgs, type Scope, SETTINGS_SECTION,
} from './protocol';
import { errorMessage, type MemoryServer } from './server';

const PAGE_SIZE = 100;
const REFRESH_DELAY_MS = 200;

export type NotesNode =
  | { kind: 'group'; scope: Scope; notes: NoteSummary[]; problems: NoteProblem[] }
  | { kind: 'note'; note: NoteSummary; uri?: string }
  | { kind: 'problem'; problem: NoteProblem }
  | { kind: 'more' };

/** What the view shows: the pages fetched so far for one question. */
interface NotesState {
  uri?: string;
  query?: string;
  first: NotesPage;
  notes: NoteSummary[];
  nextCursor: string | null;
}

export class NotesView implements vscode.TreeDataProvider<NotesNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<NotesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<NotesNode>;
  private readonly subscriptions: vscode.Disposable[];
  private state: NotesState | undefined;
  private error: string | undefined;
  private query: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private lastTarget: string | undefined;

  constructor(private readonly server: MemoryServer, private readonly model: MemoryModel) {
    this.view = vscode.window.createTreeView(NOTES_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.subscriptions = [
      server.onDidChangeNotes(() => this.scheduleRefresh()),
      server.onDidChangeRunning(() => this.scheduleRefresh()),
      // The active file decides the project; refresh when it changes (the model follows the editor).
      model.onDidChange(() => {
        const target = this.model.targetUri?.toString();
        if (target !== this.lastTarget) {
          this.scheduleRefresh();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${SETTINGS_SECTION}.notes`)) {
          this.scheduleRefresh(600); // after the server has reread its settings
        }
      }),
      this.view.onDidChangeVisibility((e) => { if (e.visible) { this.scheduleRefresh(0); } }),
    ];
    void vscode.commands.executeCommand('setContext', NOTES_SEARCH_CONTEXT, false);
    this.scheduleRefresh(0);
  }

  /** The search shown, if any. */
  get searchQuery(): string | undefined {
    return this.query;
  }

  /** The file or folder whose project's notes the view shows. */
  get targetUri(): string | undefined {
    return this.state?.uri ?? this.model.targetUri?.toString();
  }

  /** The notes directories of the notes shown (no `project` outside a project). */
  get directories(): NotesPage['directories'] | undefined {
    return this.state?.first.directories;
  }

  /** The project root of the notes shown (null outside a project). */
  get projectRoot(): string | null | undefined {
    return this.state?.first.projectRoot;
  }

  async search(query: string | undefined): Promise<void> {
    this.query = query && query.trim() !== '' ? query : undefined;
    await vscode.commands.executeCommand('setContext', NOTES_SEARCH_CONTEXT, this.query !== undefined);
    await this.refresh();
  }

  scheduleRefresh(delay = REFRESH_DELAY_MS): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => { this.timer = undefined; void this.refresh(); }, delay);
  }

  /** Fetch the first page for the current question again. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    const uri = this.model.targetUri?.toString();
    this.lastTarget = uri;
    if (!this.server.running) {
      this.show(undefined, 'The Memory Lens language server is not running.', generation);
      return;
    }
    try {
      const first = await this.fetch(uri, this.query, undefined);
      this.show({ uri, query: this.query, first, notes: first.notes, nextCursor: first.nextCursor }, undefined, generation);
    } catch (err) {
      this.server.log.warn(`Listing notes: ${errorMessage(err)}`);
      this.show(undefined, errorMessage(err), generation);
    }
  }

  /** Append the next page of the current question. */
  async loadMore(): Promise<void> {
    const state = this.state;
    if (!state?.nextCursor) {
      return;
    }
    const generation = ++this.generation;
    try {
      const page = await this.fetch(state.uri, state.query, state.nextCursor);
      this.show({ ...state, notes: [...state.notes, ...page.notes], nextCursor: page.nextCursor }, undefined, generation);
    } catch (err) {
      // A cursor the server no longer accepts (the notes changed): start again from the top.
      this.server.log.warn(`Loading more notes: ${errorMessage(err)}`);
      await this.refresh();
    }
  }

  getTreeItem(node: NotesNode): vscode.TreeItem {
    switch (node.kind) {
      case 'group': return this.groupItem(node);
      case 'note': return noteItem(node.note, this.state?.first.projectRoot ?? null);
      case 'problem': return problemItem(node.problem);
      case 'more': return moreItem(this.state);
    }
  }

  getChildren(node?: NotesNode): NotesNode[] {
    const state = this.state;
    if (!state) {
      return [];
    }
    if (!node) {
      const groups = groupNotes(state.notes);
      const scopes: Scope[] = state.first.projectRoot ? ['project', 'global'] : ['global'];
      const nodes: NotesNode[] = scopes.map((scope) => ({
        kind: 'group', scope, notes: groups[scope], problems: state.first.problems.filter((p) => p.scope === scope),
      }));
      return state.nextCursor ? [...nodes, { kind: 'more' }] : nodes;
    }
    if (node.kind === 'group') {
      return [
        ...node.notes.map((note): NotesNode => ({ kind: 'note', note, uri: state.uri })),
        ...node.problems.map((problem): NotesNode => ({ kind: 'problem', problem })),
      ];
    }
    return [];
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const s of this.subscriptions) {
      s.dispose();
    }
    this.view.dispose();
    this.changed.dispose();
  }

  private fetch(uri: string | undefined, query: string | undefined, cursor: string | undefined): Promise<NotesPage> {
    const base: NotesListArgs = { scope: 'both', limit: PAGE_SIZE, ...(uri ? { uri } : {}), ...(cursor ? { cursor } : {}) };
    if (query !== undefined) {
      const args: NotesSearchArgs = { ...base, query };
      return this.server.command<NotesPage>(CMD_NOTES_SEARCH, args);
    }
    return this.server.command<NotesPage>(CMD_NOTES_LIST, base);
  }

  private show(state: NotesState | undefined, error: string | undefined, generation: number): void {
    if (generation !== this.generation) {
      return; // a newer refresh started meanwhile
    }
    this.state = state;
    this.error = error;
    const total = state?.first.total ?? 0;
    this.view.message = notesViewMessage({ query: state?.query, total, shown: state?.notes.length ?? 0, error: this.error });
    this.view.description = state?.query !== undefined ? `search: ${state.query}` : undefined;
    this.changed.fire(undefined);
  }

  private groupItem(node: Extract<NotesNode, { kind: 'group' }>): vscode.TreeItem {
    const first = this.state?.first;
    const { label, description, tooltip } = first
      ? groupLabel(node.scope, node.notes.length, first, os.homedir())
      : { label: node.scope, description: '', tooltip: '' };
    const empty = node.notes.length + node.problems.length === 0;
    const item = new vscode.TreeItem(label, empty ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded);
    // VS Code keeps an item's collapsed state by id: a group that gains its first note opens anew.
    item.id = `notes:${node.scope}:${empty ? 'empty' : 'notes'}`;
    item.description = description;
    item.tooltip = tooltip;
    item.contextValue = `notesGroup.${node.scope}`;
    item.iconPath = new vscode.ThemeIcon(node.scope === 'global' ? 'globe' : 'repo');
    return item;
  }
}

function noteItem(note: NoteSummary, projectRoot: string | null): vscode.TreeItem {
  const item = new vscode.TreeItem(note.name, vscode.TreeItemCollapsibleState.None);
  item.id = `note:${note.scope}:${note.name}`;
  item.description = noteDescription(note);
  item.tooltip = noteTooltip(note, projectRoot, os.homedir());
  item.contextValue = `note.${note.scope}`;
  item.iconPath = new vscode.ThemeIcon(note.shadowed ? 'eye-closed' : 'note');
  item.command = { title: 'Open Note', command: CLIENT_COMMANDS.openNote, arguments: [note] };
  item.accessibilityInformation = { label: `${note.scope} note ${note.name}${note.tags.length ? `, tags ${note.tags.join(', ')}` : ''}` };
  return item;
}

function problemItem(problem: NoteProblem): vscode.TreeItem {
  const name = problem.path.split(/[\\/]/).pop() ?? problem.path;
  const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.None);
  item.id = `noteProblem:${problem.uri}`;
  item.description = `not a usable note: ${problem.reason}`;
  item.tooltip = `${problem.path}\n${problem.reason}\nIt is skipped, and never overwritten: fix or remove it by hand.`;
  item.contextValue = 'noteProblem';
  item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
  item.command = { title: 'Open File', command: 'vscode.open', arguments: [vscode.Uri.parse(problem.uri)] };
  return item;
}

function moreItem(state: NotesState | undefined): vscode.TreeItem {
  const item = new vscode.TreeItem(moreLabel(state?.notes.length ?? 0, state?.first.total ?? 0, PAGE_SIZE));
  item.id = 'notes:more';
  item.iconPath = new vscode.ThemeIcon('ellipsis');
  item.contextValue = 'notesMore';
  item.command = { title: 'Load More Notes', command: CLIENT_COMMANDS.loadMoreNotes, arguments: [] };
  return item;
}
