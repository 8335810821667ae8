import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  locateProgram, missingProgramMessage, noServerMessage, parseCommandSetting, pathPythonsFor, type PythonProbe, quote,
  resolveServerCommand,
  type ResolveInputs, serverCwd,
} from '../src/serverCommand';

/** A probe that answers from tables and records what it was asked. */
function fakeProbe(withMemoryLens: string[], supported: string[]): PythonProbe & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    hasMemoryLens: async (python) => { asked.push(`has:${python.join(' ')}`); return withMemoryLens.includes(python.join(' ')); },
    isSupported: async (python) => { asked.push(`ok:${python.join(' ')}`); return supported.includes(python.join(' ')); },
  };
}

const base: ResolveInputs = {
  setting: [],
  pythonExtensionInstalled: false,
  bundledLauncher: '/ext/bundled/launch.py',
  pathPythons: [['python3'], ['python']],
};

describe('parseCommandSetting', () => {
  it('takes an array of strings as program and arguments', () => {
    assert.deepEqual(parseCommandSetting(['memory-lens', 'serve']), { command: ['memory-lens', 'serve'] });
  });
  it('treats empty values as unset', () => {
    for (const v of [undefined, null, '', []]) {
      assert.deepEqual(parseCommandSetting(v), {});
    }
  });
  it('accepts a plain string as a program without arguments', () => {
    assert.deepEqual(parseCommandSetting(' /usr/bin/memory-lens-serve '), { command: ['/usr/bin/memory-lens-serve'] });
  });
  it('rejects other shapes with a message naming the setting', () => {
    for (const v of [[1, 2], { a: 1 }, [''], 3]) {
      const got = parseCommandSetting(v);
      assert.equal(got.command, undefined);
      assert.match(got.error ?? '', /memoryLens\.server\.command/);
    }
  });
});

describe('resolveServerCommand', () => {
  it('uses the setting first and probes nothing', async () => {
    const probe = fakeProbe(['/venv/bin/python'], ['python3']);
    const got = await resolveServerCommand({ ...base, setting: ['/x/memory-lens', 'serve'], activeInterpreter: ['/venv/bin/python'] }, probe);
    assert.ok(got.ok);
    assert.deepEqual(got.launch, { command: '/x/memory-lens', args: ['serve'], source: 'setting' });
    assert.deepEqual(probe.asked, []);
  });

  it('reports a malformed setting instead of silently falling back', async () => {
    const got = await resolveServerCommand({ ...base, setting: [42] }, fakeProbe([], ['python3']));
    assert.equal(got.ok, false);
  });

  it('runs memory_lens from the Python extension interpreter when it is installed there', async () => {
    const got = await resolveServerCommand(
      { ...base, pythonExtensionInstalled: true, activeInterpreter: ['/venv/bin/python'] },
      fakeProbe(['/venv/bin/python'], []));
    assert.ok(got.ok);
    assert.deepEqual(got.launch, { command: '/venv/bin/python', args: ['-m', 'memory_lens', 'serve'], source: 'python-extension' });
  });

  it('keeps extra parts of an interpreter command (conda run …)', async () => {
    const conda = ['conda', 'run', '-n', 'env', 'python'];
    const got = await resolveServerCommand({ ...base, activeInterpreter: conda }, fakeProbe([conda.join(' ')], []));
    assert.ok(got.ok);
    assert.deepEqual(got.launch.args, ['run', '-n', 'env', 'python', '-m', 'memory_lens', 'serve']);
  });

  it('runs the bundled server with the active interpreter when memory_lens is not installed in it', async () => {
    const got = await resolveServerCommand(
      { ...base, pythonExtensionInstalled: true, activeInterpreter: ['/venv/bin/python'] },
      fakeProbe([], ['/venv/bin/python', 'python3']));
    assert.ok(got.ok);
    assert.deepEqual(got.launch, { command: '/venv/bin/python', args: ['/ext/bundled/launch.py'], source: 'bundled' });
  });

  it('falls back to a supported Python on PATH for the bundled server', async () => {
    const probe = fakeProbe([], ['python']);
    const got = await resolveServerCommand(base, probe);
    assert.ok(got.ok);
    assert.deepEqual(got.launch, { command: 'python', args: ['/ext/bundled/launch.py'], source: 'bundled' });
    assert.deepEqual(probe.asked, ['ok:python3', 'ok:python']);
    assert.match(got.tried.join('\n'), /python3 is missing or older than Python 3\.10/);
  });

  it('names every fix when nothing works', async () => {
    const got = await resolveServerCommand({ ...base, bundledLauncher: undefined }, fakeProbe([], []));
    assert.equal(got.ok, false);
    if (!got.ok) {
      assert.match(got.message, /memoryLens\.server\.command/);
      assert.match(got.message, /pip install memory-lens/);
      assert.match(got.message, /Python 3\.10 or newer on PATH/);
      assert.match(got.tried.join('\n'), /bundled server: not included/);
    }
  });

  it('words the interpreter fix for users without the Python extension', () => {
    assert.match(noServerMessage(false), /install the Python extension/);
    assert.match(noServerMessage(true), /interpreter selected in the Python extension/);
  });
});

describe('pathPythonsFor and quote', () => {
  it('prefers the py launcher on Windows and python3 elsewhere', () => {
    assert.deepEqual(pathPythonsFor('win32')[0], ['py', '-3']);
    assert.deepEqual(pathPythonsFor('linux')[0], ['python3']);
  });
  it('quotes only parts that need it', () => {
    assert.equal(quote(['/usr/bin/python3', '-m', 'memory_lens', 'serve']), '/usr/bin/python3 -m memory_lens serve');
    assert.equal(quote(['/My Venv/python']), '"/My Venv/python"');
  });
});

describe('locateProgram', () => {
  const files = new Set(['/usr/bin/python3', '/opt/ml/bin/memory-lens', 'C:\\Py\\python.EXE']);
  const isFile = (p: string) => files.has(p);
  it('finds a program on PATH', () => {
    assert.equal(locateProgram('memory-lens', { PATH: '/usr/bin:/opt/ml/bin/' }, 'linux', isFile), '/opt/ml/bin/memory-lens');
    assert.equal(locateProgram('python3', { PATH: '/usr/bin' }, 'linux', isFile), '/usr/bin/python3');
  });
  it('checks a path as given', () => {
    assert.equal(locateProgram('/opt/ml/bin/memory-lens', {}, 'linux', isFile), '/opt/ml/bin/memory-lens');
    assert.equal(locateProgram('/nowhere/memory-lens', { PATH: '/opt/ml/bin' }, 'linux', isFile), undefined);
  });
  it('tries PATHEXT on Windows', () => {
    assert.equal(locateProgram('python', { Path: 'C:\\Py', PATHEXT: '.EXE;.CMD' }, 'win32', isFile), 'C:\\Py\\python.EXE');
  });
  it('says which program is missing and how to fix it', () => {
    assert.match(missingProgramMessage('mlens'), /`mlens`, which was not found.*clear it/);
  });
});

describe('serverCwd', () => {
  it('starts interpreters and the bundled copy from the extension, never from the workspace', () => {
    // `python -m memory_lens` imports from its working directory first.
    for (const source of ['python-extension', 'bundled']) {
      assert.equal(serverCwd(source, '/ws', true, '/ext'), '/ext');
      assert.equal(serverCwd(source, '/ws', false, '/ext'), '/ext');
    }
  });
  it("runs the user's own command from the workspace folder only when the workspace is trusted", () => {
    assert.equal(serverCwd('setting', '/ws', true, '/ext'), '/ws');
    assert.equal(serverCwd('setting', '/ws', false, '/ext'), '/ext');
    assert.equal(serverCwd('setting', undefined, true, '/ext'), '/ext');
  });
});
