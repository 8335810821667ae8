/**
 * The language client: finds the server command, starts, restarts and stops the server, and
 * gives the UI typed access to its custom request, notification and commands.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  ResponseError,
  type ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import {
  ALLOW_SECRET_ARG, type AgentName, type AgentSource, CLIENT_COMMANDS, CMD_EFFECTIVE, CMD_SAVE, DID_CHANGE_NOTIFICATION, type DidChangeParams, EFFECTIVE_REQUEST,
  EFFECTIVE_SCHEME, type EffectiveMemory, type EffectiveParams, EXPLAIN_REQUEST, type ExplainParams,
  NOTES_DID_CHANGE_NOTIFICATION,
  type NotesDidChangeParams, SAVE_ACTION_KIND, SAVE_GLOBAL_TITLE, type SaveResult, type Scope, SECRET_ERROR_KEY, SETTINGS_SECTION,
  type ServerSettings,
} from './protocol';
import { CHAT_SETTINGS, chatSettings } from './chatSettings';
import { fromAgentView, serverLogLine } from './labels';

/** The chat settings of the document at URI (its folder's, else the workspace's): `vscodeSettings`. */
function chatSettingsFor(uri: string): Record<string, unknown> {
  let scope: vscode.Uri | undefined;
  try {
    scope = vscode.Uri.parse(uri, true);
  } catch {
    scope = undefined;
  }
  const config = vscode.workspace.getConfiguration(undefined, scope);
  return chatSettings((id) => config.get(id));
}
import { activeInterpreter, pythonExtensionInstalled, pythonProbe } from './python';
import {
  locateProgram, missingProgramMessage, parseCommandSetting, pathPythonsFor, quote, resolveServerCommand, serverCwd,
  SETTING_NAME,
} from './serverCommand';

const CLIENT_ID = 'memoryLens';
const CLIENT_NAME = 'Memory Lens';

/** The settings the server reads, from the `memoryLens` section. */
export function serverSettings(resource?: vscode.Uri): ServerSettings {
  const cfg = vscode.workspace.getConfiguration(SETTINGS_SECTION, resource);
  return {
    filenames: cfg.get<string[]>('filenames', ['GEMINI.md']),
    globalDir: cfg.get<string | null>('globalDir', null) || null,
    tokenBudget: cfg.get<number | null>('tokenBudget', null),
    agents: cfg.get<string[] | null>('agents', null),
    debug: cfg.get<boolean>('debug', false),
    notes: {
      layout: cfg.get<'' | 'memory-lens' | 'aicoder' | null>('notes.layout', '') || null,
      globalDir: cfg.get<string | null>('notes.globalDir', null) || null,
    },
    followOutsideLinks: cfg.get<boolean>('followOutsideLinks', false),
    save: { preview: cfg.get<boolean>('save.preview', false) },
  };
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function forEachLine(input: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', onLine);
}

/** Whether ERR is the server's refusal of text holding a secret (`data.secret`: kind, line, column). */
export function isSecretRefusal(err: unknown): boolean {
  const data = err instanceof ResponseError ? err.data as Record<string, unknown> | undefined : undefined;
  return typeof data?.[SECRET_ERROR_KEY] === 'object' && data[SECRET_ERROR_KEY] !== null;
}

/** The refusal's message without the hint meant for clients that cannot ask. */
export function secretMessage(err: unknown): string {
  return errorMessage(err).replace(/ \(send it again with .*\)$/, '');
}

/** Ask, in a modal dialog, whether to save text the server found a secret in (it names the kind and position only). */
export async function confirmSecret(err: unknown): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(`Memory Lens: the text ${secretMessage(err)}.`, {
    modal: true,
    detail: 'Agents send memory files and notes to their model, and they are often committed. Save it only if it is not a secret.',
  }, 'Save anyway');
  return choice === 'Save anyway';
}

/** A server error as one line for the user. */
export function errorMessage(err: unknown): string {
  if (err instanceof ResponseError || err instanceof Error) {
    return err.message.split('\n')[0];
  }
  return String(err);
}

export class MemoryServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<boolean> | undefined;
  private readonly memoryChanged = new vscode.EventEmitter<string[]>();
  private readonly runningChanged = new vscode.EventEmitter<boolean>();
  private readonly notesChanged = new vscode.EventEmitter<string[]>();
  private readonly entrySaved = new vscode.EventEmitter<SaveResult>();
  /** `memory/didChange` from the server: the memory files that changed. */
  readonly onDidChangeMemory = this.memoryChanged.event;
  /** `memory/notesDidChange` from the server: the document URIs of the notes that changed. */
  readonly onDidChangeNotes = this.notesChanged.event;
  /** A save code action ran the server's save command (the result, to show with Undo and Open). */
  readonly onDidSaveEntry = this.entrySaved.event;
  /** The server started (true) or stopped (false). */
  readonly onDidChangeRunning = this.runningChanged.event;

  constructor(private readonly context: vscode.ExtensionContext, readonly log: vscode.LogOutputChannel) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** Start the server once; concurrent callers share the attempt. */
  start(): Promise<boolean> {
    this.starting ??= this.doStart().finally(() => { this.starting = undefined; });
    return this.starting;
  }

  async restart(): Promise<boolean> {
    this.log.info('Restarting the language server');
    // A start in progress used the settings of before: let it finish, then replace it.
    await this.starting?.catch(() => false);
    await this.stop();
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.dispose(2000);
      } catch (err) {
        this.log.warn(`Stopping the language server: ${errorMessage(err)}`);
      }
    }
  }

  /** `memory/effective` for the file or folder at URI, in AGENT's view (`agent` sent only when not gemini). */
  async effective(uri: string, annotated = false, agent: AgentName = 'gemini'): Promise<EffectiveMemory> {
    const client = await this.ready();
    if (agent !== 'gemini') {
      const params: EffectiveParams = { textDocument: { uri }, agent,
        ...(agent === 'copilot-vscode' ? { vscodeSettings: chatSettingsFor(uri) } : {}) };
      return fromAgentView(await client.sendRequest<Omit<EffectiveMemory, 'sources'> & { sources: AgentSource[] }>(EFFECTIVE_REQUEST, params));
    }
    const params: EffectiveParams = { textDocument: { uri }, ...(annotated ? { annotated: true } : {}) };
    return client.sendRequest<EffectiveMemory>(EFFECTIVE_REQUEST, params);
  }

  /** `memory/explain` for the file or folder at URI: which agent reads which instruction file, and why not. */
  async explain(uri: string): Promise<unknown> {
    const client = await this.ready();
    const params: ExplainParams = { textDocument: { uri }, vscodeSettings: chatSettingsFor(uri) };
    return client.sendRequest<unknown>(EXPLAIN_REQUEST, params);
  }

  /**
   * Run a server command with its one object argument; rejects with the server's message. A write
   * the server refused for a secret is asked about (`confirmSecret`) and sent again, allowed.
   */
  async command<T>(command: string, arg: object): Promise<T> {
    const client = await this.ready();
    const send = (a: object) => client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [a] }) as Promise<T>;
    try {
      return await send(arg);
    } catch (err) {
      if (!isSecretRefusal(err)) {
        throw err;
      }
      if (!(await confirmSecret(err))) {
        throw new Error(secretMessage(err));
      }
      return send({ ...arg, [ALLOW_SECRET_ARG]: true });
    }
  }

  dispose(): void {
    void this.stop();
    this.memoryChanged.dispose();
    this.runningChanged.dispose();
    this.notesChanged.dispose();
    this.entrySaved.dispose();
  }

  private async ready(): Promise<LanguageClient> {
    if (!this.running && !(await this.start())) {
      throw new Error('the Memory Lens language server is not running (see "Memory Lens: Restart Server")');
    }
    if (!this.client) {
      throw new Error('the Memory Lens language server stopped');
    }
    return this.client;
  }

  private async doStart(): Promise<boolean> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const bundled = this.context.asAbsolutePath('bundled/launch.py');
    const setting = vscode.workspace.getConfiguration(SETTINGS_SECTION).get<unknown>('server.command');
    const resolution = await resolveServerCommand({
      setting,
      // Ask the Python extension (activating it) only when the setting does not decide.
      activeInterpreter: parseCommandSetting(setting).command ? undefined : await activeInterpreter(folder, this.log),
      pythonExtensionInstalled: pythonExtensionInstalled(),
      bundledLauncher: fs.existsSync(bundled) ? bundled : undefined,
      pathPythons: pathPythonsFor(process.platform),
    }, pythonProbe(this.context.extensionPath));
    for (const step of resolution.tried) {
      this.log.info(`Server resolution: ${step}`);
    }
    if (!resolution.ok) {
      this.log.error(resolution.message);
      void this.showStartError(resolution.message);
      return false;
    }
    const { command, args, source } = resolution.launch;
    const cwd = serverCwd(source, folder?.fsPath, vscode.workspace.isTrusted, this.context.extensionPath);
    // A relative program path names a file in the server's working directory.
    const program = /[\\/]/.test(command) && !path.isAbsolute(command) ? path.join(cwd, command) : command;
    if (source === 'setting' && !locateProgram(program, process.env, process.platform, isFile)) {
      const message = missingProgramMessage(command);
      this.log.error(message);
      void this.showStartError(message);
      return false;
    }
    this.log.info(`Starting the language server (${source}): ${quote([command, ...args])}`);
    const serverOptions: ServerOptions = {
      command: program,
      args,
      transport: TransportKind.stdio,
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, this.clientOptions());
    client.onNotification(DID_CHANGE_NOTIFICATION, (params: DidChangeParams | undefined) => {
      this.memoryChanged.fire(Array.isArray(params?.uris) ? params.uris : []);
    });
    client.onNotification(NOTES_DID_CHANGE_NOTIFICATION, (params: NotesDidChangeParams | undefined) => {
      this.notesChanged.fire(Array.isArray(params?.documentUris) ? params.documentUris : []);
    });
    // Also covers the library's own restarts after a crash.
    client.onDidChangeState((e) => {
      if (e.newState === State.Running || e.oldState === State.Running) {
        this.runningChanged.fire(e.newState === State.Running);
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      const message = `Memory Lens could not start its language server with ${quote([command, ...args])}: ` +
        `${errorMessage(err)}`;
      this.log.error(message);
      void client.dispose(1000).catch(() => undefined);
      void this.showStartError(message);
      return false;
    }
    this.log.info(`Language server running: ${client.initializeResult?.serverInfo?.name ?? 'memory-lens'} ` +
      `${client.initializeResult?.serverInfo?.version ?? ''}`.trimEnd());
    return true;
  }

  private clientOptions(): LanguageClientOptions {
    return {
      // Code actions work on a selection in any file; diagnostics, hover and lenses on memory files.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      // The server logs to stderr as "memory-lens: LEVEL: message": keep its level in the log.
      stdioOptions: {
        stdout: (input, channel) => forEachLine(input, (line) => channel.info(line)),
        stderr: (input, channel) => forEachLine(input, (line) => {
          const { level, message } = serverLogLine(line);
          channel[level](message);
        }),
      },
      // noteDocuments: this client opens memory-lens-note: URIs (workspace symbols point at them).
      // trusted: in an untrusted workspace the server ignores the workspace's values of the settings
      // that choose which files it writes (docs/security.md); granting trust restarts it.
      initializationOptions: {
        [SETTINGS_SECTION]: { ...serverSettings(), noteDocuments: true },
        trusted: vscode.workspace.isTrusted,
      },
      // The chat settings too: when one changes, the server asks for them again (copilot-vscode).
      synchronize: { configurationSection: [SETTINGS_SECTION, ...CHAT_SETTINGS] },
      middleware: { ...codeLensMiddleware, ...this.saveMiddleware() },
    };
  }

  /**
   * "Save selection to … memory" code actions. The save command (the default) runs here so that
   * its result reaches the UI (VS Code drops a command's result): `onDidSaveEntry` shows it with
   * Undo and Open, and a failure is one line. With `save.preview` the action carries an edit
   * instead; VS Code applies it to the buffer only, so the action also runs SAVE_APPLIED_EDIT,
   * which saves the files it changed (VS Code runs an action's command only once its edit was applied).
   */
  private saveMiddleware(): Middleware {
    return {
      executeCommand: async (command, args, next) => {
        if (command !== CMD_SAVE) {
          return next(command, args) as unknown;
        }
        try {
          let result: SaveResult | undefined;
          try {
            result = await next(command, args) as SaveResult | undefined;
          } catch (err) {
            if (!isSecretRefusal(err) || !(await confirmSecret(err))) {
              throw isSecretRefusal(err) ? new Error(secretMessage(err)) : err;
            }
            result = await this.command<SaveResult>(command, { ...(args[0] as object), [ALLOW_SECRET_ARG]: true });
          }
          if (result && typeof result.uri === 'string') {
            this.entrySaved.fire(result);
          }
          return result;
        } catch (err) {
          this.log.error(`Save: ${errorMessage(err)}`);
          void vscode.window.showErrorMessage(`Memory Lens: Save failed: ${errorMessage(err)}`);
          return undefined;
        }
      },
      provideCodeActions: async (document, range, context, token, next) => {
        const actions = await next(document, range, context, token);
        return actions?.map((action) => {
          if (action instanceof vscode.CodeAction && action.edit && !action.command
            && action.kind && vscode.CodeActionKind.Empty.append(SAVE_ACTION_KIND).contains(action.kind)) {
            // No arguments: VS Code forgets a command's arguments once the Refactor Preview closes the
            // menu, before it runs the command; the files to save are kept here per action instead.
            const scope = action.title === SAVE_GLOBAL_TITLE ? 'global' : 'project';
            previewTargets.set(scope, action.edit.entries().map(([uri]) => uri.toString()));
            action.command = { title: 'Save the memory file', command: SAVE_APPLIED_EDIT[scope] };
          }
          return action;
        });
      },
    };
  }

  private async showStartError(message: string): Promise<void> {
    const actions = ['Open Settings', ...(pythonExtensionInstalled() ? ['Select Interpreter'] : []), 'Show Log'];
    const choice = await vscode.window.showErrorMessage(message, ...actions);
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', SETTING_NAME);
    } else if (choice === 'Select Interpreter') {
      await vscode.commands.executeCommand('python.setInterpreter');
    } else if (choice === 'Show Log') {
      this.log.show();
    }
  }
}

/** Internal commands (not in the palette): save the files the last previewed save of that scope changed. */
export const SAVE_APPLIED_EDIT = {
  project: 'memoryLens.saveAppliedEdit.project',
  global: 'memoryLens.saveAppliedEdit.global',
} as const;
const previewTargets = new Map<Scope, string[]>();

export async function saveAppliedEdit(scope: Scope, log: vscode.LogOutputChannel): Promise<void> {
  // Saved without asking whether it is dirty: the extension host may not have seen the edit make it so yet.
  for (const uri of previewTargets.get(scope) ?? []) {
    const target = vscode.Uri.parse(uri);
    const saved = await (await vscode.workspace.openTextDocument(target)).save();
    log.info(`Saving ${target.fsPath} after the previewed save: ${saved ? 'saved' : 'not saved'}`);
    if (!saved) {
      void vscode.window.showWarningMessage(`Memory Lens: ${target.fsPath} was changed but not saved; save it with File: Save.`);
    }
  }
}

/**
 * The server's code lens runs its effective-memory command, whose result VS Code would drop:
 * point it at the client command that opens the effective memory document instead.
 */
const codeLensMiddleware: Middleware = {
  async provideCodeLenses(document, token, next) {
    const lenses = await next(document, token);
    return lenses?.map((lens) => showEffectiveLens(lens, document.uri));
  },
  async resolveCodeLens(lens, token, next) {
    const resolved = await next(lens, token);
    return resolved ? showEffectiveLens(resolved, undefined) : resolved;
  },
};

function showEffectiveLens(lens: vscode.CodeLens, uri: vscode.Uri | undefined): vscode.CodeLens {
  if (lens.command?.command !== CMD_EFFECTIVE) {
    return lens;
  }
  const arg: unknown = lens.command.arguments?.[0];
  const fromArg = typeof arg === 'object' && arg !== null && typeof (arg as { uri?: unknown }).uri === 'string'
    ? vscode.Uri.parse((arg as { uri: string }).uri) : undefined;
  const target = fromArg ?? uri;
  lens.command = {
    title: lens.command.title,
    tooltip: lens.command.tooltip ?? 'Show the effective memory here',
    command: CLIENT_COMMANDS.showEffectiveMemory,
    arguments: target && target.scheme !== EFFECTIVE_SCHEME ? [target] : [],
  };
  return lens;
}
