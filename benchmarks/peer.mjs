// Gemini CLI's own memory loader (@google/gemini-cli-core), timed on a benchmark tree.
//
//   node peer.mjs PACKAGE_DIR JOB.json
//
// JOB: {"mode": "discovery", "root", "runs", "maxDirs": [200, null]}  (null: no cap)
//   -> loadServerHierarchicalMemory(root, ...) the way the CLI loads memory at startup
//      (downward discovery below the working directory, .gitignore and .geminiignore respected)
// JOB: {"mode": "upward", "root", "files", "passes"}
//   -> loadJitSubdirectoryMemory(file, [root], new Set()) for each file: the upward lookup the CLI
//      does when a tool touches a file (every GEMINI.md from the file's directory up to the git root)
// Prints one JSON object on stdout. Run with HOME pointing at an empty directory so that no
// global memory is read.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

// The CLI routes console output through its own patcher, which drops debug messages unless
// --debug is given; do the same so that logging neither pollutes stdout nor skews timings.
for (const level of ['log', 'info', 'debug', 'warn', 'error']) console[level] = () => {};

const [pkgDir, jobPath] = process.argv.slice(2);
const job = JSON.parse(fs.readFileSync(jobPath, 'utf8'));
const load = (rel) => import(pathToFileURL(path.join(pkgDir, 'dist', 'src', rel)).href);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)]; };

async function discovery() {
  const { loadServerHierarchicalMemory } = await load('utils/memoryDiscovery.js');
  const { FileDiscoveryService } = await load('services/fileDiscoveryService.js');
  const extensions = { getExtensions: () => [] };
  const filtering = { respectGitIgnore: true, respectGeminiIgnore: true };
  const out = {};
  for (const cap of job.maxDirs) {
    const times = [];
    let found = 0;
    for (let i = 0; i < job.runs; i++) {
      const t = performance.now();
      const service = new FileDiscoveryService(job.root);
      const res = await loadServerHierarchicalMemory(job.root, [], service, extensions, true, 'tree',
        filtering, cap === null ? Infinity : cap);
      times.push(performance.now() - t);
      found = res.filePaths.length;
    }
    out[cap === null ? 'uncapped' : `max_dirs_${cap}`] = { ms: median(times), runs_ms: times, found };
  }
  return out;
}

async function upward() {
  const { loadJitSubdirectoryMemory } = await load('utils/memoryDiscovery.js');
  const passes = [];
  let files = 0;
  for (let pass = 0; pass < job.passes; pass++) {
    const times = [];
    for (const file of job.files) {
      const t = performance.now();
      const res = await loadJitSubdirectoryMemory(file, [job.root], new Set());
      times.push(performance.now() - t);
      if (pass === 0) files += res.files.length;
    }
    passes.push({ p50: median(times), p99: pct(times, 99) });
  }
  const warm = passes.slice(1).length ? passes.slice(1) : passes;
  return {
    first_pass_p50_ms: passes[0].p50, first_pass_p99_ms: passes[0].p99,
    p50_ms: median(warm.map((p) => p.p50)), p99_ms: median(warm.map((p) => p.p99)),
    files_loaded: files, lookups: job.files.length,
  };
}

const result = job.mode === 'discovery' ? await discovery() : await upward();
process.stdout.write(JSON.stringify(result) + '\n');
