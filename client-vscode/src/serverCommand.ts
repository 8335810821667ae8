/**
 * Which command starts the Memory Lens language server. No VS Code import: the extension
 * gathers the inputs, `resolveServerCommand` decides, and unit tests drive it with fakes.
 *
 * Order, as in the Python tools extensions:
 *   1. the `memoryLens.server.command` setting (an array: program and arguments);
 *   2. the Python extension's active interpreter, when `memory_lens` is installed in it
 *      (`python -m memory_lens serve`);
 *   3. the server bundled in the extension, run by a Python >= 3.10 (the active interpreter,
 *      else `python3` / `python` on PATH);
 *   4. an error that names each fix.
 */

export type ServerSource = 'setting' | 'python-extension' | 'bundled';

export interface ServerLaunch {
  command: string;
  args: string[];
  source: ServerSource;
}

export interface ResolveInputs {
  /** The raw `memoryLens.server.command` setting value (anything the user typed). */
  setting: unknown;
  /** The Python extension's active interpreter as a command (e.g. `["/venv/bin/python"]`), if any. */
  activeInterpreter?: readonly string[];
  /** Whether the Python extension is installed (only changes the wording of the error). */
  pythonExtensionInstalled: boolean;
  /** Absolute path of the bundled launcher script when the extension ships one. */
  bundledLauncher?: string;
  /** Interpreters to try on PATH for the bundled server, in order. */
  pathPythons: readonly (readonly string[])[];
}

/** Questions asked of a Python interpreter; the extension answers them by running it. */
export interface PythonProbe {
  /** True when `python -m memory_lens serve` can run with this interpreter. */
  hasMemoryLens(python: readonly string[]): Promise<boolean>;
  /** True when the interpreter exists and is Python 3.10 or newer. */
  isSupported(python: readonly string[]): Promise<boolean>;
}

export type Resolution =
  | { ok: true; launch: ServerLaunch; tried: string[] }
  | { ok: false; message: string; tried: string[] };

export const SETTING_NAME = 'memoryLens.server.command';
export const MIN_PYTHON = '3.10';

/** Parse the setting: an array of non-empty strings; a plain string is taken as one program. */
export function parseCommandSetting(value: unknown): { command?: string[]; error?: string } {
  if (value === undefined || value === null || value === '') {
    return {};
  }
  if (typeof value === 'string') {
    return { command: [value.trim()] };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return {};
    }
    if (value.every((part): part is string => typeof part === 'string') && value[0].trim() !== '') {
      return { command: value.map((part) => part) };
    }
  }
  return {
    error: `"${SETTING_NAME}" must be an array of strings such as ["memory-lens", "serve"]; ` +
      `got ${JSON.stringify(value)}`,
  };
}

/** Resolve the server command, asking PROBE about interpreters only as far as needed. */
export async function resolveServerCommand(inputs: ResolveInputs, probe: PythonProbe): Promise<Resolution> {
  const tried: string[] = [];
  const parsed = parseCommandSetting(inputs.setting);
  if (parsed.error) {
    return { ok: false, message: parsed.error, tried: [`setting: ${parsed.error}`] };
  }
  if (parsed.command) {
    const [command, ...args] = parsed.command;
    return { ok: true, launch: { command, args, source: 'setting' }, tried: [`setting: ${quote(parsed.command)}`] };
  }
  tried.push(`setting "${SETTING_NAME}": not set`);

  const active = inputs.activeInterpreter && inputs.activeInterpreter.length > 0 ? inputs.activeInterpreter : undefined;
  if (active) {
    if (await probe.hasMemoryLens(active)) {
      const [command, ...rest] = active;
      return {
        ok: true,
        launch: { command, args: [...rest, '-m', 'memory_lens', 'serve'], source: 'python-extension' },
        tried: [...tried, `Python extension interpreter ${quote(active)}: has memory_lens`],
      };
    }
    tried.push(`Python extension interpreter ${quote(active)}: memory_lens is not installed`);
  } else {
    tried.push(inputs.pythonExtensionInstalled
      ? 'Python extension: no active interpreter'
      : 'Python extension: not installed');
  }

  if (inputs.bundledLauncher) {
    const candidates = active ? [active, ...inputs.pathPythons] : [...inputs.pathPythons];
    for (const python of candidates) {
      if (await probe.isSupported(python)) {
        const [command, ...rest] = python;
        return {
          ok: true,
          launch: { command, args: [...rest, inputs.bundledLauncher], source: 'bundled' },
          tried: [...tried, `bundled server with ${quote(python)}`],
        };
      }
      tried.push(`bundled server: ${quote(python)} is missing or older than Python ${MIN_PYTHON}`);
    }
  } else {
    tried.push('bundled server: not included in this build');
  }
  return { ok: false, message: noServerMessage(inputs.pythonExtensionInstalled), tried };
}

/** The error shown when no way to start the server works: one sentence per fix. */
export function noServerMessage(pythonExtensionInstalled: boolean): string {
  const interpreterFix = pythonExtensionInstalled
    ? 'install it into the interpreter selected in the Python extension (`pip install memory-lens`)'
    : 'install the Python extension and select an interpreter that has memory-lens (`pip install memory-lens`)';
  return 'Memory Lens cannot start its language server. Fix one of: ' +
    `set "${SETTING_NAME}" to a command that runs \`memory-lens serve\`; ` +
    `${interpreterFix}; ` +
    `or put Python ${MIN_PYTHON} or newer on PATH to run the server bundled with the extension.`;
}

/** Interpreters to look for on PATH, for the platform. */
export function pathPythonsFor(platform: string): string[][] {
  return platform === 'win32' ? [['py', '-3'], ['python'], ['python3']] : [['python3'], ['python']];
}

/** A command line for logs. */
export function quote(parts: readonly string[]): string {
  return parts.map((p) => (/^[\w@%+=:,./-]+$/.test(p) ? p : JSON.stringify(p))).join(' ');
}

/**
 * Where PROGRAM would be found: itself when it contains a path separator, else the first
 * PATH entry holding it (with a PATHEXT extension on Windows). Undefined when nowhere.
 */
export function locateProgram(
  program: string,
  env: Readonly<Record<string, string | undefined>>,
  platform: string,
  isFile: (path: string) => boolean,
): string | undefined {
  const win = platform === 'win32';
  const sep = win ? ';' : ':';
  const exts = win ? ['', ...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)] : [''];
  const candidates = (base: string) => exts.map((ext) => base + ext);
  if (program.includes('/') || (win && program.includes('\\'))) {
    return candidates(program).find(isFile);
  }
  const pathVar = env.PATH ?? (win ? env.Path : undefined) ?? '';
  for (const dir of pathVar.split(sep).filter(Boolean)) {
    const joined = `${dir.replace(/[\\/]+$/, '')}${win ? '\\' : '/'}${program}`;
    const found = candidates(joined).find(isFile);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/** The error for a `memoryLens.server.command` whose program cannot be found. */
export function missingProgramMessage(program: string): string {
  return `Memory Lens cannot start its language server: "${SETTING_NAME}" runs \`${program}\`, which was not ` +
    'found. Fix the setting (an absolute path works best), or clear it to use the Python extension\'s ' +
    'interpreter or the server bundled with the extension.';
}

/**
 * The server's working directory. `python -m memory_lens` looks in its working directory first,
 * so a workspace holding a `memory_lens` folder would run that instead of the server: start it
 * from the extension's own directory. Only a command the user set, in a trusted workspace, runs
 * from the workspace folder (it may name paths relative to it).
 */
export function serverCwd(source: string, folder: string | undefined, trusted: boolean, extensionPath: string): string {
  return source === 'setting' && folder && trusted ? folder : extensionPath;
}
