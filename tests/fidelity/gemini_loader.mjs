// Gemini CLI's own memory loader (@google/gemini-cli-core), run on the differential suite's trees.
//
//   node gemini_loader.mjs PACKAGE_DIR JOB.json
//
// JOB: {"cases": [{"id", "home", "cwd", "fileNames": ["GEMINI.md", ...]}]}
// For each case, with HOME set to case.home, the memory the CLI loads at startup for a session in
// case.cwd, exactly as MemoryContextManager.refresh() assembles it (0.61.0): the global files, the
// project files from cwd up to the git root, de-duplicated by file identity, read and expanded by
// readGeminiMdFiles (imports in 'tree' format, boundary marker .git), then each group joined by
// concatenateInstructions. Prints {"<id>": "<global>\n\n<project>" (empty groups left out)}.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// The CLI drops debug output unless --debug; keep stdout for the result alone.
for (const level of ['log', 'info', 'debug', 'warn', 'error']) console[level] = () => {};

const [pkgDir, jobPath] = process.argv.slice(2);
const job = JSON.parse(fs.readFileSync(jobPath, 'utf8'));
const load = (rel) => import(pathToFileURL(path.join(pkgDir, 'dist', 'src', rel)).href);
const discovery = await load('utils/memoryDiscovery.js');
const { resetGeminiMdFilename } = await load('tools/memoryTool.js');

const out = {};
for (const c of job.cases) {
  process.env.HOME = c.home;
  delete process.env.GEMINI_CLI_HOME;
  process.chdir(c.cwd);
  resetGeminiMdFilename(c.fileNames);
  const global = await discovery.getGlobalMemoryPaths();
  const project = await discovery.getEnvironmentMemoryPaths([c.cwd], ['.git']);
  const unique = Array.from(new Set([...global, ...project]));
  const { paths } = await discovery.deduplicatePathsByFileIdentity(unique);
  const contents = await discovery.readGeminiMdFiles(paths, 'tree', ['.git']);
  const byPath = new Map(contents.map((item) => [item.filePath, item]));
  const groups = discovery.categorizeAndConcatenate({ global, extension: [], project }, byPath);
  out[c.id] = [groups.global, groups.project].filter(Boolean).join('\n\n');
}
process.stdout.write(JSON.stringify(out) + '\n');
