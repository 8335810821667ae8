"""A deterministic monorepo-like workspace for the Memory Lens benchmarks.

    python benchmarks/generate.py --size large [--root DIR] [--force]

The tree (same seed, same bytes):

    ROOT/
      .git/                 HEAD, config, refs, info/exclude (`scratch/`), loose objects
      .gitignore            node_modules/, build/, dist/, *.log, .cache/, coverage/
      .geminiignore         drafts/
      GEMINI.md             always one at the root
      <source tree>         nested directories with source files; GEMINI.md files at every depth;
                            some directories hold their own `.gitignore` (`generated/`, `*.tmp`)
                            or `.geminiignore` (`private/`), with ignored subtrees beside them
      node_modules/ …       npm-like packages, nested node_modules (ignored, by far the biggest part)
      packages/*/node_modules, build/   (ignored)

Memory files are also planted where a correct scan must not look (node_modules, build,
`generated/`, `private/`, `drafts/`, `scratch/`): `manifest["expected"]` lists exactly the memory
files Memory Lens should find, `manifest["planted_ignored"]` the others.

Each GEMINI.md is 1-20 KB of headings and bullets (sub-bullets, code fences, paragraphs too); a
share of the bullets comes from a common pool, with case, spacing and punctuation variations, so
duplicate and redundant entries exist for the checks to find. `manifest["sample_files"]` lists
random source files (for `memory/effective`), `manifest["change_files"]` memory files to edit.

Trees live in a cache directory, never in the repository: `$MEMORY_LENS_BENCH_CACHE`, else
`~/.cache/memory-lens-bench`. A tree is reused while its manifest matches the parameters.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

GENERATOR_VERSION = 1
SEED = 20250101


@dataclass(frozen=True)
class Preset:
    dirs: int  # source directories
    files_per_dir: int  # mean source files per directory
    depth: int  # deepest source directory
    memory_files: int  # GEMINI.md files in the source tree (root included)
    nm_dirs: int  # directories under node_modules (all packages together)
    nm_files: int  # files under node_modules
    build_files: int  # files under build/
    git_objects: int  # loose objects in .git/objects
    workspace_packages: int  # packages/* with their own node_modules
    nested_ignores: int  # source directories with their own .gitignore and an ignored subtree
    gemini_ignores: int  # source directories with their own .geminiignore and an ignored subtree
    planted: int  # memory files planted inside node_modules/build
    min_kb: int = 1
    max_kb: int = 20
    samples: int = 1000  # source files for memory/effective
    change_samples: int = 30  # memory files to edit for the change benchmark


PRESETS = {
    # ~1.1k files, ~130 directories, 20 memory files
    "small": Preset(dirs=80, files_per_dir=8, depth=6, memory_files=20, nm_dirs=30, nm_files=250,
                    build_files=30, git_objects=40, workspace_packages=2, nested_ignores=2,
                    gemini_ignores=2, planted=2, samples=200, change_samples=10),
    # ~51k files, ~5k directories, 200 memory files
    "medium": Preset(dirs=3000, files_per_dir=9, depth=10, memory_files=200, nm_dirs=1900,
                     nm_files=20000, build_files=2000, git_objects=2000, workspace_packages=10,
                     nested_ignores=20, gemini_ignores=10, planted=5),
    # ~307k files, ~29k directories (~162k ignored files), 1000 memory files
    "large": Preset(dirs=12000, files_per_dir=12, depth=14, memory_files=1000, nm_dirs=16000,
                    nm_files=150000, build_files=8300, git_objects=10000, workspace_packages=40,
                    nested_ignores=60, gemini_ignores=30, planted=20, max_kb=21),
    # ~1.03M files, ~94k directories (~529k ignored files), 3000 memory files: shows how each
    # figure grows with the tree
    "xlarge": Preset(dirs=40000, files_per_dir=12, depth=16, memory_files=3000, nm_dirs=52000,
                     nm_files=490000, build_files=27000, git_objects=33000, workspace_packages=120,
                     nested_ignores=200, gemini_ignores=100, planted=60, max_kb=21),
}

MEMORY_NAME = "GEMINI.md"
TOP_DIRS = ["src", "lib", "pkg", "internal", "cmd", "app", "services", "tools", "docs", "test",
            "scripts", "api", "core", "web", "utils"]
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
         "sigma tau upsilon phi chi psi omega auth user model view controller handler router config "
         "cache store queue worker parser lexer render client server proto schema widget panel "
         "table index search report export import billing payment order cart session token crypto "
         "hash stream buffer codec image video audio graph node edge metrics trace log event hook "
         "plugin adapter driver engine runtime kernel shell").split()
EXTS = [".py", ".ts", ".tsx", ".js", ".go", ".rs", ".java", ".md", ".json", ".yaml", ".css", ".html",
        ".c", ".h", ".txt", ".sh", ".toml"]
HEADINGS = ["Coding style", "Testing", "Architecture", "Build & run", "Conventions", "Project context",
            "Do not", "Security", "Performance", "Dependencies", "Error handling", "Logging",
            "Review checklist", "Glossary", "Release process"]
VERBS = ["Always", "Never", "Prefer", "Avoid", "Use", "Document", "Test", "Run", "Keep", "Validate",
         "Log", "Cache", "Wrap", "Check", "Reuse"]
OBJECTS = ["async functions", "type hints", "the shared logger", "dependency injection",
           "small pure functions", "feature flags", "the retry helper", "snake_case names",
           "explicit imports", "structured errors", "the config loader", "integration tests",
           "the vendored client", "immutable data", "unit tests", "pinned versions", "the public API",
           "database migrations", "SQL parameters", "the job queue"]
TAILS = ["in new code", "when touching legacy modules", "before merging", "for every endpoint",
         "unless the lead approves", "in hot paths", "for CLI commands", "in CI",
         "when adding dependencies", "for user-facing strings", "in the data layer",
         "across service boundaries", "in tests as well", "for background jobs"]
ROOT_GITIGNORE = b"node_modules/\nbuild/\ndist/\n*.log\n.cache/\ncoverage/\n"
NESTED_GITIGNORE = b"# generated code\ngenerated/\n*.tmp\n"
NESTED_GEMINIIGNORE = b"private/\n"
ROOT_GEMINIIGNORE = b"drafts/\n"
GIT_EXCLUDE = b"# git ls-files --others --exclude-from=.git/info/exclude\nscratch/\n"


def cache_dir() -> Path:
    """Where generated trees and installed peers live (outside the repository)."""
    env = os.environ.get("MEMORY_LENS_BENCH_CACHE", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "memory-lens-bench"


def default_root(size: str) -> Path:
    return cache_dir() / "trees" / f"{size}-v{GENERATOR_VERSION}"


class TreeWriter:
    """Writes one tree and keeps count of what it wrote."""

    def __init__(self, preset: Preset, seed: int = SEED) -> None:
        self.p = preset
        self.rng = random.Random(seed)
        self.files = self.dirs = self.bytes = self.ignored_files = self.bullets = 0
        self.filler = bytes(self.rng.getrandbits(8) % 95 + 32 for _ in range(4096))
        self.pool = [self.bullet() for _ in range(400)]  # shared across files: duplicates

    # Primitives -------------------------------------------------------------------------------

    def mkdir(self, path: str) -> None:
        os.mkdir(path)
        self.dirs += 1

    def write(self, path: str, data: bytes, ignored: bool = False) -> None:
        with open(path, "wb") as fh:
            fh.write(data)
        self.files += 1
        self.bytes += len(data)
        self.ignored_files += ignored

    def source_file(self, path: str, ignored: bool = False) -> None:
        n = int(self.rng.expovariate(1 / 600)) % 4000
        start = self.rng.randint(0, 4096 - min(n, 4096))
        self.write(path, self.filler[start:start + n], ignored)

    def fresh_name(self, used: set[str], ext: str = "") -> str:
        rng = self.rng
        while True:
            name = rng.choice(WORDS)
            if rng.random() < 0.5:
                name += "_" + rng.choice(WORDS)
            if rng.random() < 0.2:
                name += str(rng.randint(0, 99))
            name += ext
            if name not in used:
                used.add(name)
                return name

    # Memory files -----------------------------------------------------------------------------

    def bullet(self) -> str:
        rng = self.rng
        return (f"{rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)} "
                f"(ref {rng.choice(WORDS)}-{rng.randint(1, 10 ** 6)}).")

    def variant(self, text: str) -> str:
        """TEXT written differently but normalising to the same entry."""
        r = self.rng.random()
        if r < 0.25:
            return text.lower()
        if r < 0.5:
            return text.replace(" ", "  ", 2)
        if r < 0.75:
            return text.rstrip(".")
        return text

    def memory_text(self, title: str) -> tuple[bytes, int]:
        """The content of one memory file and how many top-level bullets it has."""
        rng = self.rng
        bullets = 0
        target = rng.randint(self.p.min_kb * 1024, self.p.max_kb * 1024)
        out = [f"# Project memory for {title}\n"]
        size = len(out[0])
        while size < target:
            block = [f"\n## {rng.choice(HEADINGS)}\n\n"]
            if rng.random() < 0.1:
                block.append("Notes for agents working in this directory.\n\n")
            for _ in range(rng.randint(3, 15)):
                text = self.variant(rng.choice(self.pool)) if rng.random() < 0.3 else self.bullet()
                block.append(f"- {text}\n")
                bullets += 1
                if rng.random() < 0.1:
                    block.append(f"  - {self.bullet()}\n")  # a sub-bullet: part of the entry above
            if rng.random() < 0.05:
                block.append("\n```sh\nmake test\n- not an entry\n```\n")
            out += block
            size += sum(len(b) for b in block)
        return "".join(out).encode(), bullets

    def memory_file(self, directory: str, ignored: bool = False) -> str:
        path = os.path.join(directory, MEMORY_NAME)
        data, bullets = self.memory_text(os.path.basename(directory) or "root")
        self.write(path, data, ignored)
        if not ignored:
            self.bullets += bullets
        return path

    # Tree parts -------------------------------------------------------------------------------

    def git_dir(self, root: str) -> None:
        git = os.path.join(root, ".git")
        self.mkdir(git)
        for sub in ("refs", "refs/heads", "refs/tags", "info", "hooks", "objects", "objects/pack"):
            self.mkdir(os.path.join(git, sub))
        self.write(os.path.join(git, "HEAD"), b"ref: refs/heads/main\n")
        self.write(os.path.join(git, "config"), b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
        self.write(os.path.join(git, "refs/heads/main"), b"0" * 40 + b"\n")
        self.write(os.path.join(git, "info/exclude"), GIT_EXCLUDE)
        made: set[str] = set()
        for _ in range(self.p.git_objects):
            digest = "%040x" % self.rng.getrandbits(160)
            sub = os.path.join(git, "objects", digest[:2])
            if digest[:2] not in made:
                self.mkdir(sub)
                made.add(digest[:2])
            self.source_file(os.path.join(sub, digest[2:]))

    def source_tree(self, root: str) -> list[tuple[str, int]]:
        """Source directories grown at random (each under an existing one); returns (path, depth)."""
        rng, p = self.rng, self.p
        reserved = {".git", ".gitignore", ".geminiignore", "node_modules", "build", "dist", MEMORY_NAME,
                    "generated", "private", "drafts", "scratch", "packages"}
        used: dict[str, set[str]] = {root: set(reserved)}
        dirs = [(root, 0)]
        for top in TOP_DIRS[:max(1, min(len(TOP_DIRS), p.dirs // 20))]:
            path = os.path.join(root, top)
            self.mkdir(path)
            used[root].add(top)
            used[path] = set(reserved)
            dirs.append((path, 1))
        while len(dirs) - 1 < p.dirs:
            # Mostly under recent directories: deep chains, like real code bases.
            lo = max(1, len(dirs) - 50) if rng.random() < 0.6 else 1
            parent, depth = dirs[rng.randint(lo, len(dirs) - 1)]
            if depth >= p.depth:
                continue
            path = os.path.join(parent, self.fresh_name(used[parent]))
            self.mkdir(path)
            used[path] = set(reserved)
            dirs.append((path, depth + 1))
        self.sources: list[str] = []
        for path, _ in dirs:
            for _ in range(max(0, int(rng.gauss(p.files_per_dir, p.files_per_dir / 3)))):
                name = os.path.join(path, self.fresh_name(used[path], rng.choice(EXTS)))
                self.source_file(name)
                self.sources.append(name)
        return dirs

    def ignored_subtree(self, path: str, files: int, memory: bool = True) -> str | None:
        """A directory of FILES files (and a planted memory file) that a scan must skip."""
        self.mkdir(path)
        for i in range(files):
            self.source_file(os.path.join(path, f"out{i}.js"), ignored=True)
        return self.memory_file(path, ignored=True) if memory else None

    def nested_ignores(self, dirs: list[tuple[str, int]]) -> list[str]:
        """Nested .gitignore and .geminiignore files, each with the subtree it excludes."""
        planted = []
        candidates = [d for d, depth in dirs if depth >= 1]
        picks = self.rng.sample(candidates, min(len(candidates), self.p.nested_ignores + self.p.gemini_ignores))
        for i, directory in enumerate(picks):
            if i < self.p.nested_ignores:
                self.write(os.path.join(directory, ".gitignore"), NESTED_GITIGNORE)
                self.source_file(os.path.join(directory, "notes.tmp"), ignored=True)
                planted.append(self.ignored_subtree(os.path.join(directory, "generated"), 20))
            else:
                self.write(os.path.join(directory, ".geminiignore"), NESTED_GEMINIIGNORE)
                planted.append(self.ignored_subtree(os.path.join(directory, "private"), 5))
        return planted

    def node_modules(self, base: str, n_dirs: int, n_files: int) -> list[str]:
        """npm-like packages (lib/, dist/, scoped names, nested node_modules); ignored."""
        rng = self.rng
        top = os.path.join(base, "node_modules")
        self.mkdir(top)
        holders, made, pkgs = [(top, 0)], 1, 0
        all_dirs: list[str] = []
        while made < n_dirs:
            holder, level = holders[rng.randrange(len(holders))]
            scope = f"@{rng.choice(WORDS)}" if rng.random() < 0.15 else ""
            if scope and not os.path.isdir(os.path.join(holder, scope)):
                self.mkdir(os.path.join(holder, scope))
                made += 1
            pkg = os.path.join(holder, scope, f"{rng.choice(WORDS)}-{rng.choice(WORDS)}{pkgs}")
            pkgs += 1
            self.mkdir(pkg)
            made += 1
            all_dirs.append(pkg)
            self.write(os.path.join(pkg, "package.json"), b'{"name":"x","version":"1.0.0"}\n', ignored=True)
            for sub in rng.sample(["lib", "dist", "src", "types", "esm", "cjs"], rng.randint(1, 4)):
                path = os.path.join(pkg, sub)
                self.mkdir(path)
                made += 1
                all_dirs.append(path)
                for _ in range(rng.randint(0, 3)):
                    path = os.path.join(path, f"{rng.choice(WORDS)}{made}")
                    self.mkdir(path)
                    made += 1
                    all_dirs.append(path)
            if level < 3 and rng.random() < 0.08:
                nested = os.path.join(pkg, "node_modules")
                self.mkdir(nested)
                made += 1
                holders.append((nested, level + 1))
        all_dirs = all_dirs or [top]
        for i in range(n_files):
            ext = rng.choice([".js", ".d.ts", ".map", ".json", ".cjs"])
            self.source_file(os.path.join(all_dirs[rng.randrange(len(all_dirs))], f"f{i}{ext}"), ignored=True)
        return all_dirs

    def build_dir(self, root: str) -> list[str]:
        dirs = [os.path.join(root, "build")]
        self.mkdir(dirs[0])
        for i in range(max(1, self.p.build_files // 50)):
            path = os.path.join(self.rng.choice(dirs), f"out{i}")
            self.mkdir(path)
            dirs.append(path)
        for i in range(self.p.build_files):
            self.source_file(os.path.join(self.rng.choice(dirs), f"o{i}.o"), ignored=True)
        return dirs

    def workspace_packages(self, root: str) -> list[tuple[str, int]]:
        """packages/pkgN, each with package.json and its own (ignored) node_modules."""
        p = self.p
        if not p.workspace_packages:
            return []
        self.mkdir(os.path.join(root, "packages"))
        pkgs = []
        for i in range(p.workspace_packages):
            path = os.path.join(root, "packages", f"pkg{i}")
            self.mkdir(path)
            self.write(os.path.join(path, "package.json"), b'{"name":"pkg"}\n')
            pkgs.append((path, 2))
        return pkgs

    def ignored_parts(self, root: str, packages: list[tuple[str, int]]) -> list[str]:
        """node_modules (70% at the root, the rest in packages/*) and build/; their directories."""
        p = self.p
        share = 0.7 if packages else 1.0
        dirs = self.node_modules(root, int(p.nm_dirs * share), int(p.nm_files * share))
        for path, _ in packages:
            dirs += self.node_modules(path, max(2, int(p.nm_dirs * (1 - share)) // len(packages)),
                                      int(p.nm_files * (1 - share)) // len(packages))
        if p.build_files:
            dirs += self.build_dir(root)
        return dirs

    def place_memory(self, root: str, dirs: list[tuple[str, int]]) -> list[str]:
        """The root memory file and others at uniformly chosen depths."""
        by_depth: dict[int, list[str]] = {}
        for path, depth in dirs:
            by_depth.setdefault(depth, []).append(path)
        depths = sorted(by_depth)
        chosen = {root}
        while len(chosen) < min(self.p.memory_files, len(dirs)):
            chosen.add(self.rng.choice(by_depth[self.rng.choice(depths)]))
        return [self.memory_file(d) for d in sorted(chosen)]

    def special_ignores(self, root: str) -> list[str]:
        """`drafts/` (root .geminiignore) and `scratch/` (.git/info/exclude), each with a memory file."""
        self.write(os.path.join(root, ".geminiignore"), ROOT_GEMINIIGNORE)
        docs = os.path.join(root, "docs")
        if not os.path.isdir(docs):
            self.mkdir(docs)
        return [self.ignored_subtree(os.path.join(docs, "drafts"), 10),
                self.ignored_subtree(os.path.join(root, "scratch"), 10)]

    # The whole tree --------------------------------------------------------------------------------

    def run(self, root: str) -> dict:
        started = time.perf_counter()
        self.mkdir(root)
        self.git_dir(root)
        self.write(os.path.join(root, ".gitignore"), ROOT_GITIGNORE)
        dirs = self.source_tree(root)
        packages = self.workspace_packages(root)
        dirs += packages
        ignored_dirs = self.ignored_parts(root, packages)
        expected = self.place_memory(root, dirs)
        planted = self.nested_ignores(dirs) + self.special_ignores(root)
        for _ in range(self.p.planted):
            directory = self.rng.choice(ignored_dirs)
            if not os.path.exists(os.path.join(directory, MEMORY_NAME)):
                planted.append(self.memory_file(directory, ignored=True))
        rel = lambda paths: sorted(os.path.relpath(x, root) for x in paths)  # noqa: E731
        deepest = max(dirs, key=lambda d: (d[1], d[0]))
        return {
            "generator_version": GENERATOR_VERSION, "seed": SEED, "preset": asdict(self.p),
            "files": self.files, "dirs": self.dirs, "bytes": self.bytes,
            "ignored_files": self.ignored_files, "source_dirs": len(dirs),
            "memory_files": len(expected), "bullets": self.bullets,
            "expected": rel(expected), "planted_ignored": rel(planted),
            "deepest_dir": os.path.relpath(deepest[0], root), "deepest_depth": deepest[1],
            "sample_files": rel(self.rng.sample(self.sources, min(self.p.samples, len(self.sources)))),
            "change_files": rel(self.rng.sample(expected[1:], min(self.p.change_samples, len(expected) - 1))),
            "generate_seconds": round(time.perf_counter() - started, 1),
        }


def manifest_path(root: Path) -> Path:
    return root.parent / f"{root.name}.manifest.json"


def ensure_tree(size: str, root: Path | None = None, force: bool = False, quiet: bool = False) -> tuple[Path, dict]:
    """The tree for SIZE and its manifest, generated unless an identical one is already there."""
    preset = PRESETS[size]
    root = (root or default_root(size)).absolute()
    mpath = manifest_path(root)
    if not force and mpath.is_file() and root.is_dir():
        manifest = json.loads(mpath.read_text())
        if (manifest.get("generator_version"), manifest.get("preset")) == (GENERATOR_VERSION, asdict(preset)):
            return root, manifest
    if root.exists():
        shutil.rmtree(root)
    mpath.unlink(missing_ok=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"generating the {size} tree in {root} ...", file=sys.stderr, flush=True)
    manifest = TreeWriter(preset).run(str(root))
    mpath.write_text(json.dumps(manifest, indent=1))  # written last: it marks a complete tree
    return root, manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=sorted(PRESETS), default="small")
    ap.add_argument("--root", type=Path, help="where to write the tree (default: the cache directory)")
    ap.add_argument("--force", action="store_true", help="regenerate even if the tree exists")
    args = ap.parse_args()
    root, manifest = ensure_tree(args.size, args.root, args.force)
    summary = {k: v for k, v in manifest.items() if not isinstance(v, (list, dict))}
    print(json.dumps({"root": str(root), **summary}, indent=1))


if __name__ == "__main__":
    main()
