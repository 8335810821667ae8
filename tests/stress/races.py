"""Concurrent writers against `memory-lens add`: does anything get lost?

Two races, each run N times with real processes in a throw-away project under a temp directory
(its own HOME, lock and cache directories, so no real memory file is touched):

  in-place  4 processes each run `memory-lens add` --adds times (default 40) while an "editor"
            saves the file in place every 10 ms: it reads it, truncates it and writes the same
            bytes back through one descriptor, so the editor itself never loses anything.
  append    8 processes each run `memory-lens add` --adds times (default 100) while an "editor"
            appends a numbered line every 5 ms (open for append, one write, close).

After each run the final file must hold every hand-written line (the heading, the introduction,
every appended line) and every entry whose `add` exited 0. Prints one summary line per race and a
final line; exits 1 if anything was lost, 2 on a usage error.

With MEMORY_LENS_PORTABLE_WRITES=1 the writers leave out the Linux-only calls (leases,
renameat2), as on macOS and Windows; CI runs the races both ways.

Not collected by pytest (the name does not start with `test_`). Run it from the repository root:

    .venv/bin/python tests/stress/races.py                 # 20 runs of each race
    .venv/bin/python tests/stress/races.py --runs 5 --adds 10
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HEADING = "# Project notes"
INTRO = [
    "This project keeps its agent memory here; the lines below were written by hand.",
    "Build with `make`, test with `make test`, never commit generated files.",
    "Hand-written line three: the release branch is `stable`.",
]
ADD_TIMEOUT_SECONDS = 120  # a safety net against a hung process, not a timing assertion

# The editors run as separate Python processes; they stop when the stop file appears and print
# how many saves or lines they made.
IN_PLACE_EDITOR = r"""
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
saves, longest = 0, 0.0
while not os.path.exists(stop):
    try:
        with open(path, "r+b", buffering=0) as fh:   # one descriptor: read, truncate, write the same bytes
            data = fh.read()
            fh.seek(0)
            fh.truncate()
            cut = time.monotonic()
            fh.write(data)
            longest = max(longest, time.monotonic() - cut)
        saves += 1
    except FileNotFoundError:
        pass
    time.sleep(0.010)
print(saves, longest)
"""

APPEND_EDITOR = r"""
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
lines, longest = 0, 0.0
while not os.path.exists(stop):
    with open(path, "a", encoding="utf-8") as fh:
        opened = time.monotonic()
        fh.write(f"- editor line {lines}\n")
        fh.flush()
        longest = max(longest, time.monotonic() - opened)
    lines += 1
    time.sleep(0.005)
print(lines, longest)
"""

ADDER = r"""
import subprocess, sys
command, count, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import shlex
argv = shlex.split(command)
for i in range(count):
    text = f"entry {tag} number {i}"
    try:
        done = subprocess.run([*argv, "add", text], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=%d)
    except subprocess.TimeoutExpired:
        print(f"timeout\t{text}\tdid not finish", flush=True)
        continue
    why = done.stderr.strip().splitlines()[-1:] if done.returncode else []
    print(f"{done.returncode}\t{text}\t{''.join(why)}", flush=True)
""" % ADD_TIMEOUT_SECONDS


@dataclass
class RaceTotals:
    """What N runs of one race found."""

    name: str
    runs: int = 0
    acknowledged: int = 0
    failed: int = 0
    entries_lost: int = 0
    hand_lines: int = 0
    hand_lines_lost: int = 0
    bytes_lost: int = 0  # of the missing lines, newline included
    editor_longest: float = 0.0  # the editor's longest save (truncate to write) or append (open to write)
    temp_files_left: int = 0
    seconds: float = 0.0
    lost_examples: list[str] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)

    @property
    def lost(self) -> bool:
        return bool(self.entries_lost or self.hand_lines_lost)

    def summary(self) -> str:
        return (f"{self.name}: {self.runs} runs, {self.acknowledged} adds acknowledged ({self.failed} refused), "
                f"acknowledged entries lost {self.entries_lost}, hand-written lines lost "
                f"{self.hand_lines_lost}/{self.hand_lines}, bytes lost {self.bytes_lost}, "
                f"temp files left {self.temp_files_left}, "
                f"editor's longest write {self.editor_longest * 1000:.0f} ms, "
                f"{self.seconds:.0f}s")


def default_command() -> str:
    """The `memory-lens` script next to this interpreter (the project's venv)."""
    script = Path(sys.executable).parent / "memory-lens"
    return shlex.quote(str(script)) if script.exists() else f"{shlex.quote(sys.executable)} -m memory_lens"


def sandbox_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMORY_LENS_") or k == "MEMORY_LENS_PORTABLE_WRITES"}  # the writes tested
    env.update(HOME=str(root / "home"), MEMORY_LENS_LOCK_DIR=str(root / "locks"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_CONFIG_HOME=str(root / "config"),
               XDG_DATA_HOME=str(root / "data"), PYTHONIOENCODING="utf-8")
    for d in ("home", "locks", "cache"):
        (root / d).mkdir(parents=True, exist_ok=True)
    return env


def run_once(race: str, writers: int, adds: int, command: str, run: int, totals: RaceTotals) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"memory-lens-race-{race}-"))
    try:
        env = sandbox_env(root)
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        memory = project / "GEMINI.md"
        memory.write_text("\n".join([HEADING, "", *INTRO, ""]) + "\n", encoding="utf-8")
        stop = root / "stop"
        editor_source = IN_PLACE_EDITOR if race == "in-place" else APPEND_EDITOR
        editor = subprocess.Popen([sys.executable, "-c", editor_source, str(memory), str(stop)],
                                  stdout=subprocess.PIPE, text=True, env=env)
        adders = [subprocess.Popen([sys.executable, "-c", ADDER, command, str(adds), f"w{w}r{run}"],
                                   cwd=project, env=env, stdout=subprocess.PIPE, text=True)
                  for w in range(writers)]
        results = [p.communicate()[0] for p in adders]
        stop.touch()
        made_text, longest_text = (editor.communicate()[0].split() + ["0", "0"])[:2]
        made = int(made_text)
        totals.editor_longest = max(totals.editor_longest, float(longest_text))
        final = memory.read_text(encoding="utf-8")
        lines = set(final.splitlines())
        hand = [HEADING, *INTRO]
        if race == "append":
            hand += [f"- editor line {i}" for i in range(made)]
        missing_hand = [line for line in hand if line not in lines]
        totals.hand_lines += len(hand)
        totals.hand_lines_lost += len(missing_hand)
        totals.bytes_lost += sum(len(line.encode("utf-8")) + 1 for line in missing_hand)
        for out in results:
            for row in out.splitlines():
                rc, text, why = row.split("\t", 2)
                if rc != "0":
                    totals.failed += 1
                    totals.refusals.setdefault(why, 0)
                    totals.refusals[why] += 1
                    continue
                totals.acknowledged += 1
                if f"- {text}" not in lines:
                    totals.entries_lost += 1
                    totals.bytes_lost += len(f"- {text}\n".encode("utf-8"))
                    if len(totals.lost_examples) < 5:
                        totals.lost_examples.append(f"run {run}: entry {text!r}")
        for line in missing_hand[:5 - min(5, len(totals.lost_examples))]:
            totals.lost_examples.append(f"run {run}: hand-written {line!r}")
        if missing_hand and race == "in-place":
            totals.lost_examples.append(f"run {run}: the file began {final[:60]!r}")
        totals.temp_files_left += sum(1 for name in os.listdir(project) if name.endswith(".tmp"))
        totals.runs += 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Concurrent-writer races against memory-lens add.")
    parser.add_argument("--runs", type=int, default=20, help="runs of each race (default 20)")
    parser.add_argument("--adds", type=int, default=None,
                        help="adds per writer process (default: 40 in-place, 100 append)")
    parser.add_argument("--race", choices=["in-place", "append", "all"], default="all")
    parser.add_argument("--command", default=default_command(),
                        help="how to start memory-lens (default: the script next to this Python)")
    args = parser.parse_args(argv)
    if args.runs < 1 or (args.adds is not None and args.adds < 1):
        parser.error("--runs and --adds must be at least 1")
    plan = {"in-place": (4, 40), "append": (8, 100)}
    chosen = list(plan) if args.race == "all" else [args.race]
    from memory_lens.core.settings import portable_writes_only

    print("Linux-only write calls: " + ("off (MEMORY_LENS_PORTABLE_WRITES=1)" if portable_writes_only()
                                        else "used where the system has them"), flush=True)
    lost = False
    for race in chosen:
        writers, adds = plan[race]
        totals = RaceTotals(race)
        started = time.monotonic()
        for run in range(args.runs):
            run_once(race, writers, args.adds or adds, args.command, run, totals)
        totals.seconds = time.monotonic() - started
        print(totals.summary(), flush=True)
        for example in totals.lost_examples:
            print(f"  lost: {example}", flush=True)
        for why, count in sorted(totals.refusals.items(), key=lambda item: -item[1])[:3]:
            print(f"  refused {count}x: {why}", flush=True)
        lost = lost or totals.lost
    print("races: something was lost" if lost else "races: nothing lost", flush=True)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
