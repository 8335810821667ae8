/**
 * Memory Lens for VS Code: wires the language client, the Memory panel, the effective memory
 * document, the status bar items, the Memory Notes and Agents views, note documents and the commands. All
 * memory logic lives in the server.
 */

import * as vscode from 'vscode';
import { AgentsView } from './agentsView';
import { MemoryCommands } from './commands';
import { configuredAgent, EffectiveMemoryDocuments } from './effectiveDocument';
import { MemoryModel } from './model';
import { NoteDocuments } from './noteDocuments';
import { NotesCommands } from './notesCommands';
import { NotesView } from './notesView';
import { MemoryPanel } from './panel';
import { SETTINGS_SECTION } from './protocol';
import { onActiveInterpreterChanged } from './python';
import { MemoryServer } from './server';
import { MemoryStatusBar } from './statusBar';

let server: MemoryServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Memory Lens', { log: true });
  log.info(`Memory Lens ${(context.extension.packageJSON as { version?: string }).version ?? ""} activating`);
  server = new MemoryServer(context, log);
  const model = new MemoryModel(server);
  const documents = new EffectiveMemoryDocuments(server);
  const commands = new MemoryCommands(server, model, documents);
  const noteDocuments = new NoteDocuments(server);
  const notesView = new NotesView(server, model);
  context.subscriptions.push(
    log, server, model, documents, noteDocuments, notesView,
    new MemoryPanel(model),
    new MemoryStatusBar(model),
    new AgentsView(server, model),
    ...commands.register(),
    ...new NotesCommands(server, model, notesView, noteDocuments).register(),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log.info('The workspace is now trusted: restarting the language server with its settings');
      void server?.restart();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SETTINGS_SECTION}.server.command`)) {
        log.info('"memoryLens.server.command" changed: restarting the language server');
        void server?.restart();
      } else if (e.affectsConfiguration(`${SETTINGS_SECTION}.agent`)) {
        // The client's own setting: switch the open effective memory documents, the panel and the status bar.
        void documents.switchAgent(configuredAgent());
        model.scheduleRefresh(0);
      } else if (e.affectsConfiguration(SETTINGS_SECTION)) {
        // The server rereads its settings on this event too; show what they select once it has.
        setTimeout(() => { documents.refreshAll(); model.scheduleRefresh(0); }, 500);
      }
    }),
  );
  const interpreterWatch = await onActiveInterpreterChanged(() => {
    const hasSetting = (vscode.workspace.getConfiguration(SETTINGS_SECTION).get<unknown[]>('server.command') ?? []).length > 0;
    if (!hasSetting) {
      log.info('The Python interpreter changed: restarting the language server');
      void server?.restart();
    }
  });
  if (interpreterWatch) {
    context.subscriptions.push(interpreterWatch);
  }
  await server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
