// Gemini CLI's own memory loader (@google/gemini-cli-core), run on the differential suite's trees.
//
//   node gemini_loader.mjs PACKAGE_DIR JOB.json [CLI_PACKAGE_DIR]
//
// JOB: {"cases": [{"id", "home", "cwd", "fileNames": ["GEMINI.md", ...]} or {"id", "home", "cwd",
// "settings": true}]}
// For each case, with HOME set to case.home, the memory the CLI loads at startup for a session in
// case.cwd, exactly as MemoryContextManager.refresh() assembles it (0.61.0): the global files, the
// project files from cwd up to the project root, de-duplicated by file identity, read and expanded
// by readGeminiMdFiles, then each group joined by concatenateInstructions. Prints
// {"<id>": "<global>\n\n<project>" (empty groups left out)}.
// A case without settings uses its fileNames, imports in 'tree' format and boundary marker .git.
// A "settings" case reads them the way the CLI does: loadSettings(cwd) from @google/gemini-cli
// (CLI_PACKAGE_DIR; user and workspace settings.json, folder trust), then what gemini.js and
// Config do with context.fileName (setGeminiMdFilename), context.memoryBoundaryMarkers (default
// ['.git']) and context.importFormat (default 'tree'). The CLI computes the user settings path
// once, when it is loaded: run one settings case per process.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// The CLI drops debug output unless --debug; keep stdout for the result alone.
for (const level of ['log', 'info', 'debug', 'warn', 'error']) console[level] = () => {};

const [pkgDir, jobPath, cliDir] = process.argv.slice(2);
const job = JSON.parse(fs.readFileSync(jobPath, 'utf8'));
const load = (rel) => import(pathToFileURL(path.join(pkgDir, 'dist', 'src', rel)).href);
const discovery = await load('utils/memoryDiscovery.js');
const { resetGeminiMdFilename, setGeminiMdFilename } = await load('tools/memoryTool.js');

// The bundle chunk of @google/gemini-cli that defines loadSettings (its name is a build hash).
async function cliSettingsLoader() {
  const bundle = path.join(cliDir, 'bundle');
  for (const name of fs.readdirSync(bundle).filter((n) => n.endsWith('.js')).sort()) {
    const file = path.join(bundle, name);
    if (fs.readFileSync(file, 'utf8').includes('\nfunction loadSettings(')) {
      return (await import(pathToFileURL(file).href)).loadSettings;
    }
  }
  throw new Error(`no loadSettings in ${bundle}`);
}

const out = {};
for (const c of job.cases) {
  process.env.HOME = c.home;
  delete process.env.GEMINI_CLI_HOME;
  process.chdir(c.cwd);
  let markers = ['.git'];
  let format = 'tree';
  if (c.settings) {
    const context = (await cliSettingsLoader())(c.cwd).merged.context ?? {};
    resetGeminiMdFilename();
    if (context.fileName) setGeminiMdFilename(context.fileName);
    markers = context.memoryBoundaryMarkers ?? ['.git'];
    format = context.importFormat ?? 'tree';
  } else {
    resetGeminiMdFilename(c.fileNames);
  }
  const global = await discovery.getGlobalMemoryPaths();
  const project = await discovery.getEnvironmentMemoryPaths([c.cwd], markers);
  const unique = Array.from(new Set([...global, ...project]));
  const { paths } = await discovery.deduplicatePathsByFileIdentity(unique);
  const contents = await discovery.readGeminiMdFiles(paths, format, markers);
  const byPath = new Map(contents.map((item) => [item.filePath, item]));
  const groups = discovery.categorizeAndConcatenate({ global, extension: [], project }, byPath);
  out[c.id] = [groups.global, groups.project].filter(Boolean).join('\n\n');
}
process.stdout.write(JSON.stringify(out) + '\n');
