/**
 * Notes opened in editor tabs: a FileSystemProvider for `memory-lens-note:` URIs. `stat` and
 * `readFile` ask the server for the note's Markdown document (`notes.readDocument`), `writeFile`
 * saves it back (`notes.writeDocument`), so a note is edited as Markdown while its JSON file stays
 * the truth on disk. A note changed by anyone else (`memory/notesDidChange`) fires a change event:
 * VS Code reloads a clean tab and, for a tab with unsaved edits, refuses the save and offers to
 * compare or overwrite, because `stat` reports the note file's modification time.
 */

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import { isConflictData, noteUriFromParts } from './noteLabels';
import {
  CMD_NOTES_READ_DOCUMENT, CMD_NOTES_WRITE_DOCUMENT, NOTE_SCHEME, type NoteDocument, type NoteEditResult,
  type NoteWriteDocumentArgs,
} from './protocol';
import { errorMessage, type MemoryServer } from './server';

const READ_ONLY_LAYOUT = 'Notes are created, renamed and deleted from the Memory Notes view, not as files.';

export class NoteDocuments implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  /** VS Code's form of a document URI → the server's exact string (VS Code decodes `%2F` in names). */
  private readonly serverUris = new Map<string, string>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly server: MemoryServer) {
    this.subscriptions = [
      vscode.workspace.registerFileSystemProvider(NOTE_SCHEME, this, { isCaseSensitive: true }),
      server.onDidChangeNotes((uris) => this.fireChanged(uris.map((u) => this.uriOf(u)))),
      // A restarted server has forgotten which revision each open note was read at: read them again.
      server.onDidChangeRunning((running) => { if (running) { this.fireChanged(this.openNoteUris()); } }),
    ];
  }

  /** The VS Code URI of the server's document URI DOCUMENTURI (what the Notes view opens). */
  uriOf(documentUri: string): vscode.Uri {
    const uri = vscode.Uri.parse(documentUri, true);
    this.serverUris.set(uri.toString(), documentUri);
    return uri;
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined); // changes come from memory/notesDidChange
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const doc = await this.read(uri);
    return { type: vscode.FileType.File, ctime: doc.mtime, mtime: doc.mtime, size: doc.size };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return new TextEncoder().encode((await this.read(uri)).markdown);
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    let markdown: string;
    try {
      markdown = new TextDecoder('utf-8', { fatal: true }).decode(content);
    } catch {
      throw vscode.FileSystemError.Unavailable('a note is UTF-8 text: save it with the UTF-8 encoding');
    }
    const args: NoteWriteDocumentArgs = { documentUri: this.serverUri(uri), markdown };
    try {
      await this.server.command<NoteEditResult>(CMD_NOTES_WRITE_DOCUMENT, args);
    } catch (err) {
      const conflict = err instanceof ResponseError && isConflictData(err.data);
      this.server.log.warn(`Saving note ${args.documentUri}: ${errorMessage(err)}`);
      // A conflict: VS Code's "Revert File" reloads the note; saving again offers to overwrite it.
      throw vscode.FileSystemError.Unavailable(conflict
        ? `${errorMessage(err)} (File: Revert File reloads it)` : errorMessage(err));
    }
  }

  readDirectory(): [string, vscode.FileType][] {
    throw vscode.FileSystemError.NoPermissions(READ_ONLY_LAYOUT);
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions(READ_ONLY_LAYOUT);
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions(READ_ONLY_LAYOUT);
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions(READ_ONLY_LAYOUT);
  }

  dispose(): void {
    for (const s of this.subscriptions) {
      s.dispose();
    }
    this.changed.dispose();
  }

  private async read(uri: vscode.Uri): Promise<NoteDocument> {
    const documentUri = this.serverUri(uri);
    try {
      return await this.server.command<NoteDocument>(CMD_NOTES_READ_DOCUMENT, { documentUri });
    } catch (err) {
      // The server's answer (no such note, a file that is not a note) means there is no document there.
      throw err instanceof ResponseError
        ? vscode.FileSystemError.FileNotFound(errorMessage(err))
        : vscode.FileSystemError.Unavailable(errorMessage(err));
    }
  }

  private serverUri(uri: vscode.Uri): string {
    return this.serverUris.get(uri.toString()) ?? noteUriFromParts(uri.scheme, uri.path, uri.query);
  }

  private openNoteUris(): vscode.Uri[] {
    return vscode.workspace.textDocuments.map((d) => d.uri).filter((u) => u.scheme === NOTE_SCHEME);
  }

  private fireChanged(uris: vscode.Uri[]): void {
    if (uris.length > 0) {
      this.changed.fire(uris.map((uri) => ({ type: vscode.FileChangeType.Changed, uri })));
    }
  }
}
