// Copy the Memory Lens server into bundled/ with its pure-Python dependencies, so the .vsix can
// start a server with nothing but Python >= 3.10 on PATH. Run by `npm run bundle-server` (and by
// `vscode:prepublish`, so `npm run package` always ships a fresh copy).
//
// Python used for pip: $PYTHON, else ../.venv/bin/python (the project's venv), else python3.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const client = path.resolve(here, '..');
const repo = path.resolve(client, '..');
const serverPackage = path.join(repo, 'server', 'memory_lens');
const out = path.join(client, 'bundled');
const libs = path.join(out, 'libs');
const requirements = path.join(here, 'bundled-requirements.txt');
/** Compiled dependencies the server imports only when present. */
const OPTIONAL = new Set(['rignore', 'watchfiles']);
/** Compiled dependencies with a pure-Python implementation inside their wheels (rapidfuzz's
 * `*_py` modules, which it falls back to when its compiled ones are missing): a wheel of any one
 * platform is vendored with its compiled files removed, so the bundle runs everywhere. */
const PURE_FALLBACK = new Set(['rapidfuzz']);
/** Dependencies of `memory-lens mcp` only (imported by that command): the language server never loads them. */
const MCP_ONLY = new Set(['mcp']);

function findPython() {
  if (process.env.PYTHON) {
    return process.env.PYTHON;
  }
  const venv = path.join(repo, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');
  return fs.existsSync(venv) ? venv : 'python3';
}

const normalise = (name) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** Dependency names from pyproject.toml's [project] dependencies. */
function projectDependencies() {
  const text = fs.readFileSync(path.join(repo, 'pyproject.toml'), 'utf8');
  const block = /^dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(text);
  if (!block) {
    throw new Error('pyproject.toml: no [project] dependencies list found');
  }
  // Each requirement is one double-quoted string; its name ends where a version or marker begins.
  return [...block[1].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => normalise(m[1].split(/[=<>!~ ;[]/)[0]));
}

function pinnedNames() {
  return fs.readFileSync(requirements, 'utf8').split('\n')
    .map((l) => l.replace(/#.*/, '').trim()).filter(Boolean)
    .map((l) => normalise(l.split(/[=<>!~ ;]/)[0]));
}

function copyPackage(from, to) {
  fs.cpSync(from, to, {
    recursive: true,
    filter: (src) => !src.includes('__pycache__') && !src.endsWith('.pyc') && !src.endsWith('.egg-info'),
  });
}

const missing = projectDependencies().filter((d) => !OPTIONAL.has(d) && !MCP_ONLY.has(d) && !pinnedNames().includes(d));
if (missing.length > 0) {
  throw new Error(`scripts/bundled-requirements.txt lacks server dependencies: ${missing.join(', ')}`);
}
if (!fs.existsSync(path.join(serverPackage, 'cli.py'))) {
  throw new Error(`no server at ${serverPackage}: run this from a Memory Lens checkout`);
}

const python = findPython();
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(libs, { recursive: true });
console.log(`bundle-server: vendoring pinned dependencies with ${python}`);
const pins = fs.readFileSync(requirements, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
const fallback = pins.filter((l) => PURE_FALLBACK.has(normalise(l.split(/[=<>!~ ;]/)[0])));
const pip = (args) => execFileSync(python, [
  '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile', '--no-deps',
  '--target', libs, '--python-version', '3.10', '--only-binary=:all:', ...args,
], { stdio: 'inherit' });
pip(['--implementation', 'py', '--abi', 'none', '--platform', 'any',
  ...pins.filter((l) => !fallback.includes(l))]);
if (fallback.length > 0) {
  pip(['--implementation', 'cp', '--abi', 'cp310', '--platform', 'manylinux2014_x86_64', ...fallback]);
  for (const entry of fs.readdirSync(libs, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && /\.(so|pyd|dylib)$/.test(entry.name)) {
      fs.rmSync(path.join(entry.parentPath ?? entry.path, entry.name));
    }
  }
}
fs.rmSync(path.join(libs, 'bin'), { recursive: true, force: true });
copyPackage(serverPackage, path.join(libs, 'memory_lens'));
fs.copyFileSync(path.join(here, 'launch.py'), path.join(out, 'launch.py'));

// The bundle must import with no site-packages at all (-I: isolated, -S: no site).
const check = execFileSync(python, ['-I', '-S', path.join(out, 'launch.py'), '--check'], { encoding: 'utf8' });
console.log(`bundle-server: ${check.trim()}`);
fs.rmSync(path.join(libs, 'memory_lens', '__pycache__'), { recursive: true, force: true });
for (const dir of fs.readdirSync(libs, { recursive: true, withFileTypes: true })) {
  if (dir.isDirectory() && dir.name === '__pycache__') {
    fs.rmSync(path.join(dir.parentPath ?? dir.path, dir.name), { recursive: true, force: true });
  }
}
