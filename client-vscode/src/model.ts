/**
 * What the panel and the status bar show: the effective memory and the entries of the chain
 * for the active editor's file, fetched from the server and refreshed on `memory/didChange`,
 * editor switches and server restarts.
 */

import * as vscode from 'vscode';
import { configuredAgent } from './effectiveDocument';
import { type AgentName, CMD_LIST, EFFECTIVE_SCHEME, type EffectiveMemory, type ListArgs, type ListedEntry } from './protocol';
import { errorMessage, type MemoryServer } from './server';

const REFRESH_DELAY_MS = 150;

export interface MemorySnapshot {
  /** The file (or folder) the memory is for. */
  target: vscode.Uri;
  memory?: EffectiveMemory;
  /** Whose view `memory` is (`memoryLens.agent`). */
  agent: AgentName;
  entries: ListedEntry[];
  error?: string;
}

/** The file whose memory is shown: the active editor's, else the first workspace folder. */
function editorTarget(editor: vscode.TextEditor | undefined): vscode.Uri | undefined {
  const uri = editor?.document.uri;
  if (uri && (uri.scheme === 'file' || uri.scheme === 'untitled')) {
    return uri;
  }
  return undefined;
}

export class MemoryModel implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<MemorySnapshot | undefined>();
  readonly onDidChange = this.changed.event;
  private current: MemorySnapshot | undefined;
  private target: vscode.Uri | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly server: MemoryServer) {
    this.target = editorTarget(vscode.window.activeTextEditor) ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        const next = editorTarget(editor);
        // Keep showing the last file while the effective memory document or a panel has focus.
        if (next && next.toString() !== this.target?.toString()) {
          this.target = next;
          this.scheduleRefresh();
        }
      }),
      server.onDidChangeMemory(() => this.scheduleRefresh()),
      server.onDidChangeRunning(() => this.scheduleRefresh()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.target ??= vscode.workspace.workspaceFolders?.[0]?.uri;
        this.scheduleRefresh();
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.scheme !== EFFECTIVE_SCHEME) {
          this.scheduleRefresh();
        }
      }),
    );
  }

  get snapshot(): MemorySnapshot | undefined {
    return this.current;
  }

  /** The file or folder whose memory commands act on. */
  get targetUri(): vscode.Uri | undefined {
    return this.target;
  }

  scheduleRefresh(delay = REFRESH_DELAY_MS): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => { this.timer = undefined; void this.refresh(); }, delay);
  }

  /** Fetch the effective memory and the entries for the target now. */
  async refresh(): Promise<MemorySnapshot | undefined> {
    const target = this.target;
    const generation = ++this.generation;
    const agent = configuredAgent();
    if (!target) {
      this.publish(undefined, generation);
      return undefined;
    }
    if (!this.server.running) {
      this.publish({ target, agent, entries: [], error: 'The Memory Lens language server is not running.' }, generation);
      return this.current;
    }
    const uri = target.toString();
    try {
      const listArgs: ListArgs = { scope: 'all', uri };
      const [memory, entries] = await Promise.all([
        this.server.effective(uri, false, agent),
        this.server.command<ListedEntry[] | null>(CMD_LIST, listArgs),
      ]);
      this.publish({ target, agent, memory, entries: Array.isArray(entries) ? entries : [] }, generation);
    } catch (err) {
      this.server.log.warn(`Refreshing memory for ${uri}: ${errorMessage(err)}`);
      this.publish({ target, agent, entries: [], error: errorMessage(err) }, generation);
    }
    return this.current;
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const s of this.subscriptions) {
      s.dispose();
    }
    this.changed.dispose();
  }

  private publish(snapshot: MemorySnapshot | undefined, generation: number): void {
    if (generation !== this.generation) {
      return; // a newer refresh started meanwhile
    }
    this.current = snapshot;
    this.changed.fire(snapshot);
  }
}
