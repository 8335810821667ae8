/**
 * The notes commands: "Create Note from Selection", search and clear search, open a note (its
 * Markdown document, or its JSON file), delete a note after a modal confirmation, load more.
 * Each one asks the server (`memoryLens.server.notes.*`) and shows the outcome.
 */

import * as os from 'node:os';
import * as vscode from 'vscode';
import { displayPath } from './labels';
import type { MemoryModel } from './model';
import type { NoteDocuments } from './noteDocuments';
import { noteCreatedMessage, notesScopeName, parseTagsInput, validateNoteName } from './noteLabels';
import type { NotesNode, NotesView } from './notesView';
import {
  CLIENT_COMMANDS, CMD_NOTES_CREATE, CMD_NOTES_DELETE, CMD_NOTES_SUGGEST_NAME, type Note,
  type NoteCreateArgs, type NoteDeleteArgs, type NoteDeleteResult, type NoteSuggestNameResult, type NoteSummary,
  type Scope,
} from './protocol';
import { errorMessage, type MemoryServer } from './server';

interface ScopeItem extends vscode.QuickPickItem { scope: Scope }

export class NotesCommands {
  constructor(
    private readonly server: MemoryServer,
    private readonly model: MemoryModel,
    private readonly view: NotesView,
    private readonly documents: NoteDocuments,
  ) {}

  register(): vscode.Disposable[] {
    const c = CLIENT_COMMANDS;
    const r = vscode.commands.registerCommand;
    return [
      r(c.createNoteFromSelection, () => this.createFromSelection()),
      r(c.searchNotes, () => this.search()),
      r(c.clearNoteSearch, () => this.view.search(undefined)),
      r(c.refreshNotes, () => this.view.refresh()),
      r(c.openNote, (arg?: NoteSummary | NotesNode) => this.open(noteOf(arg))),
      r(c.openNoteFile, (arg?: NoteSummary | NotesNode) => this.openFile(noteOf(arg))),
      r(c.deleteNote, (arg?: NoteSummary | NotesNode) => this.delete(arg)),
      r(c.loadMoreNotes, () => this.view.loadMore()),
    ];
  }

  /** Keep the selected text as a note: scope, name (suggested by the server), tags, then create. */
  async createFromSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showWarningMessage('Memory Lens: open a file and select the text to keep as a note.');
      return;
    }
    const selected = editor.selections.filter((s) => !s.isEmpty).map((s) => editor.document.getText(s));
    const content = selected.length > 0 ? selected.join('\n') : editor.document.lineAt(editor.selection.active.line).text;
    if (content.trim() === '') {
      void vscode.window.showWarningMessage('Memory Lens: select the text to keep as a note first.');
      return;
    }
    // From a virtual document (effective memory, a note), the project is that of the file shown.
    const source = editor.document.uri.scheme === 'file' || editor.document.uri.scheme === 'untitled'
      ? editor.document.uri : this.model.targetUri;
    const uri = source?.toString();
    await this.run('Create note', async () => {
      const suggested = await this.server.command<NoteSuggestNameResult>(CMD_NOTES_SUGGEST_NAME, { content, ...(uri ? { uri } : {}) });
      const scope = await this.pickScope(suggested.scope);
      if (!scope) {
        return;
      }
      const free = scope === suggested.scope ? suggested
        : await this.server.command<NoteSuggestNameResult>(CMD_NOTES_SUGGEST_NAME, { content, scope, ...(uri ? { uri } : {}) });
      const name = await vscode.window.showInputBox({
        title: `Memory Lens: New ${notesScopeName(scope)} (2/3)`,
        prompt: 'Name of the note (any language, up to 128 characters)',
        value: free.name,
        validateInput: validateNoteName,
        ignoreFocusOut: true,
      });
      if (name === undefined) {
        return;
      }
      const tags = await vscode.window.showInputBox({
        title: `Memory Lens: New ${notesScopeName(scope)} (3/3)`,
        prompt: 'Tags, separated by commas (optional: press Enter for none)',
        placeHolder: 'security, deploy',
        ignoreFocusOut: true,
      });
      if (tags === undefined) {
        return;
      }
      const args: NoteCreateArgs = { name, content, tags: parseTagsInput(tags), scope, ...(uri ? { uri } : {}) };
      const note = await this.server.command<Note>(CMD_NOTES_CREATE, args);
      this.view.scheduleRefresh(0);
      const message = noteCreatedMessage(note, this.view.projectRoot, os.homedir());
      void vscode.window.showInformationMessage(`Memory Lens: ${message}`, 'Open Note').then(async (choice) => {
        if (choice === 'Open Note') {
          await this.open(note);
        }
      });
    });
  }

  async search(): Promise<void> {
    const query = await vscode.window.showInputBox({
      title: 'Memory Lens: Search Notes',
      prompt: 'Words (all must match), "a phrase", prefix*, OR between groups; names, tags and contents',
      placeHolder: 'deploy staging',
      value: this.view.searchQuery ?? '',
    });
    if (query !== undefined) {
      await this.view.search(query);
    }
  }

  async open(note: Pick<NoteSummary, 'documentUri'> | undefined): Promise<void> {
    if (!note) {
      return;
    }
    await this.run('Open note', async () => {
      await vscode.window.showTextDocument(this.documents.uriOf(note.documentUri), { preview: false });
    });
  }

  async openFile(note: Pick<NoteSummary, 'fileUri'> | undefined): Promise<void> {
    if (note) {
      await vscode.window.showTextDocument(vscode.Uri.parse(note.fileUri), { preview: false });
    }
  }

  async delete(arg: NoteSummary | NotesNode | undefined): Promise<void> {
    const note = noteOf(arg);
    if (!note) {
      return;
    }
    const listedFor = arg && 'kind' in arg && arg.kind === 'note' ? arg.uri : this.view.targetUri;
    const where = displayPath(note.path, this.view.projectRoot, os.homedir());
    const choice = await vscode.window.showWarningMessage(
      `Delete the ${notesScopeName(note.scope)} "${note.name}"?`,
      { modal: true, detail: `Its file ${where} is deleted. Agents and the other tools will no longer find it.` },
      'Delete',
    );
    if (choice !== 'Delete') {
      return;
    }
    await this.run('Delete note', async () => {
      // The revision shown: a note changed since is not deleted unseen.
      const args: NoteDeleteArgs = {
        name: note.name, scope: note.scope, revision: note.revision, ...(listedFor ? { uri: listedFor } : {}),
      };
      const result = await this.server.command<NoteDeleteResult>(CMD_NOTES_DELETE, args);
      vscode.window.setStatusBarMessage(
        `Memory Lens: deleted the ${notesScopeName(result.deleted.scope)} "${result.deleted.name}"`, 5000);
    });
    this.view.scheduleRefresh(0);
  }

  private async pickScope(preferred: Scope): Promise<Scope | undefined> {
    const home = os.homedir();
    const dirs = this.view.directories;
    const items: ScopeItem[] = [
      {
        label: '$(repo) Project note', scope: 'project',
        description: dirs?.project ? displayPath(dirs.project, undefined, home) : 'no project here (no .git found above the file)',
        detail: 'Kept with the project, shareable through git',
      },
      {
        label: '$(globe) Global note', scope: 'global', description: dirs ? displayPath(dirs.global, undefined, home) : '',
        detail: 'Personal, for every project',
      },
    ];
    items.sort((a, b) => (a.scope === preferred ? -1 : b.scope === preferred ? 1 : 0));
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Memory Lens: New note (1/3)',
      placeHolder: 'Where should the note live?',
      ignoreFocusOut: true,
    });
    return picked?.scope;
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

/** The note of a command argument: a note from the view's row, or a note given directly. */
function noteOf(arg: NoteSummary | NotesNode | undefined): NoteSummary | undefined {
  if (!arg || typeof arg !== 'object') {
    return undefined;
  }
  if ('kind' in arg) {
    return arg.kind === 'note' ? arg.note : undefined;
  }
  return 'documentUri' in arg ? arg : undefined;
}
