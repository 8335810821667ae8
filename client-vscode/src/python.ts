/**
 * The Python side of starting the server: the Python extension's active interpreter (through
 * its public API, if the extension is installed) and a probe that asks an interpreter whether
 * it is new enough and whether it has `memory_lens`.
 */

import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import type { PythonProbe } from './serverCommand';

const PYTHON_EXTENSION_ID = 'ms-python.python';
const PROBE_TIMEOUT_MS = 15_000;

/** The small part of the Python extension's API that Memory Lens uses. */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(env: { path: string } | string):
      Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

export function pythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!ext) {
    return undefined;
  }
  return ext.isActive ? ext.exports : await ext.activate();
}

/** The active interpreter for RESOURCE as a command (`["/venv/bin/python"]`), if any. */
export async function activeInterpreter(resource: vscode.Uri | undefined, log: vscode.LogOutputChannel):
  Promise<string[] | undefined> {
  try {
    const api = await pythonApi();
    const envs = api?.environments;
    if (envs) {
      const active = envs.getActiveEnvironmentPath(resource);
      const resolved = active ? await envs.resolveEnvironment(active) : undefined;
      const exe = resolved?.executable.uri?.fsPath;
      if (exe) {
        return [exe];
      }
    }
    const command = api?.settings?.getExecutionDetails(resource).execCommand;
    return command && command.length > 0 ? command : undefined;
  } catch (err) {
    log.warn(`Python extension: could not get the active interpreter: ${String(err)}`);
    return undefined;
  }
}

/** Subscribe to interpreter changes, when the Python extension offers it. */
export async function onActiveInterpreterChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const api = await pythonApi();
    return api?.environments?.onDidChangeActiveEnvironmentPath?.(() => listener());
  } catch {
    return undefined;
  }
}

function runPython(python: readonly string[], code: string, cwd: string): Promise<boolean> {
  const [command, ...args] = python;
  return new Promise((resolve) => {
    execFile(command, [...args, '-c', code], { cwd, timeout: PROBE_TIMEOUT_MS, windowsHide: true }, (err) => resolve(!err));
  });
}

/**
 * Asks interpreters from CWD: `python -c` imports from its working directory first, so the probe
 * runs where the server will (the extension's directory, never an untrusted workspace).
 */
export function pythonProbe(cwd: string): PythonProbe {
  return {
    hasMemoryLens: (python) => runPython(python,
      'import sys\nif sys.version_info < (3, 10): sys.exit(1)\nimport memory_lens.lsp.server', cwd),
    isSupported: (python) => runPython(python, 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)', cwd),
  };
}
