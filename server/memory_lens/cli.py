"""The `memory-lens` command line: show, add, list, remove, check, explain, serve, notes and mcp (`cli_notes`).

stdout carries only the requested output; messages, warnings and the --debug trace go to
stderr. Exit status: 0 success, 1 failure (or findings, for `check`), 2 bad usage.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from memory_lens.cli_errors import EXIT_FAIL, EXIT_OK, EXIT_USAGE, PROG, Failure, UsageError
from memory_lens.startup import collector_paused

with collector_paused():  # the imports below allocate only long-lived objects (memory_lens/startup.py)
    from memory_lens import __version__
    from memory_lens.core.agents import AGENTS, DEFAULT_AGENT, AgentView, UnknownAgentError, agent_view
    from memory_lens.core.agents.budget import check_targets, parse_agents, readers
    from memory_lens.core.agents.wave import save_bullet
    from memory_lens.core.checks import DRIFT, SEVERITY_OF, Finding, Severity, note_secret_findings
    from memory_lens.core.discovery import Scope, TargetError, find_project_root, resolve_target
    from memory_lens.core.edit import EntryTextError
    from memory_lens.core.entries import (
        EntryNotFoundError,
        NoProjectError,
        list_entries,
        remove_entry,
        save_entry,
    )
    from memory_lens.core.gemini_settings import read_gemini_settings
    from memory_lens.core.large_files import has_too_large, show_warnings, write_effective
    from memory_lens.core.markdown import escape_controls
    from memory_lens.core.merge import Memory, load_memory
    from memory_lens.core.secrets import SecretError
    from memory_lens.core.settings import Settings, SettingsError, resolve_settings
    from memory_lens.core.writer import MemoryFileError
    from memory_lens.terminal_progress import terminal_progress

class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors that say where to look."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see '{self.prog} --help')")


def _common(memory_files: bool = True) -> argparse.ArgumentParser:
    """The options every command takes; without MEMORY_FILES, --debug alone (the notes commands)."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("memory files" if memory_files else "options")
    group.add_argument("--debug", action="store_true",
                       help="trace on stderr how memory is found and loaded" if memory_files
                       else "on an unexpected error, print the full traceback")
    if not memory_files:
        return common
    group.add_argument("--filename", action="append", metavar="NAME", default=None,
                       help="a memory file name; repeat for several, in load order (the first is "
                            "written to). Default: $MEMORY_LENS_FILENAMES (comma-separated), else "
                            "context.fileName of Gemini CLI's settings.json (.gemini/settings.json of the "
                            "working directory, then ~/.gemini/settings.json), else GEMINI.md")
    group.add_argument("--global-dir", metavar="DIR", default=None,
                       help="the global memory directory. Default: $MEMORY_LENS_GLOBAL_DIR, else ~/.gemini")
    group.add_argument("--max-file-size", type=_positive_int, default=None, metavar="BYTES",
                       help="a memory file bigger than this is reported too-large and never read whole "
                            "(not checked or edited; show streams it). Default: $MEMORY_LENS_MAX_FILE_SIZE, "
                            "else 16777216 (16 MiB)")
    return common


class _GivenOptions(argparse.Namespace):
    """The command line while it is parsed. The options every command takes (`_common`) are
    accepted before the command as well as after it (`memory-lens --global-dir ~/g show`):
    argparse parses a command's options into a fresh namespace, whose defaults would then replace
    the values given before the command. Here the default (None or False) of one of those options
    never replaces a value already given; given on both sides, the one after the command wins."""

    def __setattr__(self, name: str, value: object) -> None:
        if (name in _common_dests() and (value is None or value is False)
                and getattr(self, name, None) not in (None, False)):
            return
        super().__setattr__(name, value)


@functools.lru_cache(maxsize=1)
def _common_dests() -> frozenset[str]:
    return frozenset(vars(_common().parse_args([])))


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed ARGV (see `_GivenOptions`), as a plain namespace."""
    return argparse.Namespace(**vars(parser.parse_args(argv, namespace=_GivenOptions())))


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(prog=PROG, parents=[common],
                     description="See and safely edit the memory files AI coding agents load (GEMINI.md and "
                                 "friends). The memory file options below go before or after the command.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("show", parents=[common], help="print the effective memory for a file or directory",
                       description="Print the merged memory an agent loads for PATH (default: the current directory).")
    p.add_argument("path", nargs="?", metavar="PATH", help="a file or directory (default: the current directory)")
    p.add_argument("--format", choices=["text", "json", "annotated"], default="text",
                   help="text: the merged text; json: text, project root and sources; "
                        "annotated: Gemini CLI's per-source blocks")
    p.add_argument("--agent", choices=AGENTS, default=DEFAULT_AGENT,
                   help="whose view: gemini (default; the memory file options apply), claude (CLAUDE.md tiers "
                        "and @imports), codex (AGENTS.md cut to project_doc_max_bytes), wave (~/.wave/memory.md "
                        "and ./AGENTS.md), copilot (Copilot CLI: its instruction files, applyTo), copilot-vscode (Copilot Chat in VS Code, "
                        "by the workspace's .vscode/settings.json); see docs/agents.md")
    p.add_argument("--start", metavar="DIR", default=None,
                   help="claude, copilot: the directory the agent starts in (default: the current directory); "
                        "with a file PATH, what loads at start there plus what loads (claude) or matches "
                        "(copilot's scoped files) for PATH")

    scope_help = "project: <project root>/<first filename>; global: <global dir>/<first filename>"
    p = sub.add_parser("add", parents=[common], help="save an entry under '## Gemini Added Memories'",
                       description="Save TEXT as a '- ' entry under '## Gemini Added Memories'. "
                                   "Use -- before TEXT when it starts with '-'.")
    p.add_argument("text", metavar="TEXT",
                   help="the entry to save: '#' and list markers in front are dropped, further lines stay "
                        "in the entry")
    p.add_argument("--scope", choices=["project", "global"], default=None,
                   help=scope_help + " (default: project inside a project, else global)")
    p.add_argument("--dir", metavar="PATH", default=None, help="where to look for the project (default: cwd)")
    p.add_argument("--agent", choices=(DEFAULT_AGENT, "wave"), default=DEFAULT_AGENT,
                   help="gemini (default): as above; wave: a '- ' bullet at the end of AGENTS.md in the --dir "
                        "directory (project) or of ~/.wave/memory.md (global)")
    add_allow_secret(p)
    add_follow_outside_links(p)

    p = sub.add_parser("list", parents=[common], help="list the entries of the memory chain",
                       description="List the entries (top-level list items) of every memory file of the chain.")
    p.add_argument("--scope", choices=["project", "global", "all"], default="all",
                   help="global: the global files only; project: the files of the chain below them; "
                        "all: both (default)")
    p.add_argument("--dir", metavar="PATH", default=None, help="a file or directory (default: cwd)")
    p.add_argument("--format", choices=["text", "json"], default="text",
                   help="text: one 'PATH:LINE: [SCOPE] TEXT' line per entry; json: an array of entries")

    p = sub.add_parser("remove", parents=[common], help="remove an entry",
                       description="Remove the first entry (in `list` order) whose normalised text matches TEXT.")
    p.add_argument("text", metavar="TEXT",
                   help="the entry to remove, matched as `list` shows it (case, spacing and final "
                        "punctuation aside)")
    p.add_argument("--scope", choices=["project", "global"], default=None,
                   help="only look in project or global files (default: both)")
    p.add_argument("--dir", metavar="PATH", default=None, help="a file or directory (default: cwd)")
    add_follow_outside_links(p)

    p = sub.add_parser("check", parents=[common], help="check memory files for problems",
                       description="Check memory files. Finding codes (severity): "
                                   + ", ".join(f"{code} ({sev.value})" for code, sev in SEVERITY_OF.items())
                                   + "; docs/cli.md#check says what each means. A FILE is checked "
                                   "against the more general files of its chain; a DIR checks its chain and "
                                   "every memory file under it (.gitignore and .geminiignore honoured), as the "
                                   "language server does; no PATH checks the project of the current directory.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="a memory file, or a directory: its chain and every memory file under it "
                        "(default: the project root of the current directory; outside a project, the "
                        "current directory's chain)")
    p.add_argument("--format", choices=["text", "json"], default="text",
                   help="text: one 'PATH:LINE:COLUMN: SEVERITY: MESSAGE [CODE]' line per finding, a summary "
                        "on stderr; json: an array of findings")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument("--fix", choices=["drift"], default=None,
                   help="drift: first make one of each two drifted agents' files the source of the other, "
                        "as the editor's quick fix does (docs/cli.md#check), then check")
    p.add_argument("--budget", type=_non_negative_int, default=None, metavar="BYTES",
                   help="size budget of merged memory in UTF-8 bytes (default: $MEMORY_LENS_BUDGET, else 32768)")
    p.add_argument("--token-budget", type=_non_negative_int, default=None, metavar="TOKENS",
                   help="also warn when merged memory exceeds this many estimated tokens")
    p.add_argument("--agent", action="append", default=None, metavar="AGENT",
                   help="check what this agent loads: gemini, claude, codex or wave (repeat it or give a comma "
                        "list); over-budget names the agent and the first line it never sees, not-loaded marks "
                        "a file it does not load. Default: gemini, plus codex and claude when their files "
                        "exist among the files checked (see docs/agents.md)")

    p = sub.add_parser("explain", parents=[common], help="which agent loads which instruction file for a path, and why not",
                       description="For PATH (a file or directory), every agent (or those of --agents), every "
                                   "instruction file any of them reads on the way to PATH or in the home "
                                   "directory, and per pair: loaded, on-read (when the agent reads PATH), "
                                   "requestable, or not-loaded with the reason (docs/cli.md#explain).")
    p.add_argument("path", metavar="PATH", help="a file or directory")
    p.add_argument("--agents", action="append", default=None, metavar="AGENTS",
                   help=f"a comma list of agents (default: all of {', '.join(AGENTS)})")
    p.add_argument("--format", choices=["text", "json"], default="text",
                   help="text: each file, then each agent's status; json: the matrix (docs/cli.md#explain)")
    p.add_argument("--start", metavar="DIR", default=None,
                   help="start the agents in DIR, a directory above PATH (default: PATH's directory); "
                        "Claude Code then shows what it loads on reading PATH")

    p = sub.add_parser("serve", parents=[common], help="run the language server on stdio",
                       description="Run the Memory Lens language server (LSP) on stdin/stdout.")
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    add_follow_outside_links(p)

    from memory_lens.cli_notes import add_mcp_parser, add_notes_parser

    add_notes_parser(sub, _common(memory_files=False), _Parser)
    add_mcp_parser(sub, common)
    return parser


def add_allow_secret(p: argparse.ArgumentParser) -> None:
    """The override of the secrets guard of every command that saves text (see docs/security.md)."""
    p.add_argument("--allow-secret", action="store_true",
                   help="save the text even if it looks like it holds a key, token or password "
                        "(default: refuse, naming the kind and position)")


def add_follow_outside_links(p: argparse.ArgumentParser) -> None:
    """The opt-in of every command that writes memory files or notes (see docs/security.md)."""
    p.add_argument("--follow-outside-links", action="store_true", default=None,
                   help="write through a symlink even when its target is outside the project (or the "
                        "global memory directory); default: refuse, unless $MEMORY_LENS_FOLLOW_OUTSIDE_LINKS=1")


def _positive_int(value: str) -> int:
    n = _non_negative_int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return n


def _non_negative_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return n


def _settings(args: argparse.Namespace, lenient: bool = False) -> Settings:
    """The command's settings (core/settings.py: its flags, then the environment, then Gemini's
    settings.json, then defaults). LENIENT (the servers): a bad environment value is a warning."""
    try:
        settings = resolve_settings(args.filename, args.global_dir, getattr(args, "budget", None),
                                    getattr(args, "token_budget", None),
                                    max_file_bytes=getattr(args, "max_file_size", None),
                                    agent=read_gemini_settings(_working_dir(args)),
                                    follow_outside_links=getattr(args, "follow_outside_links", None),
                                    notes_layout=getattr(args, "layout", None),
                                    notes_dir=getattr(args, "notes_dir", None), lenient=lenient)
    except SettingsError as err:
        raise UsageError(f"{PROG}: error: {err}") from None
    for warning in settings.warnings:
        _warn(warning)
    return settings


def _working_dir(args: argparse.Namespace) -> Path | None:
    """Where Gemini CLI would run for this command (its `.gemini/settings.json` is read there):
    the directory of the command's PATH or DIR (`check`: its first PATH), else the current
    directory. None when that is not usable (the command reports it itself): the user's settings
    file alone is read."""
    paths = getattr(args, "paths", None) or [None]
    given = getattr(args, "path", None) or getattr(args, "dir", None) or paths[0]
    try:
        return resolve_target(given)
    except TargetError:
        return None


def _warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _info(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _target(path: str | None) -> Path:
    try:
        return resolve_target(path)
    except TargetError as err:
        raise Failure(str(err)) from None


FILE_AGENTS = ("claude", "cursor", "copilot", "copilot-vscode")  # agents whose view depends on the file asked about


def cmd_show(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.agent != DEFAULT_AGENT and args.format == "annotated":
        raise UsageError(f"{PROG}: error: --format annotated is Gemini CLI's form; with --agent {args.agent} "
                         "use --format text or json")
    if args.start is not None and args.agent not in FILE_AGENTS:
        raise UsageError(f"{PROG}: error: --start applies to --agent {', '.join(FILE_AGENTS[:-1])} and "
                         f"{FILE_AGENTS[-1]} only")
    read = args.agent in FILE_AGENTS and args.path is not None and os.path.isfile(args.path)
    if read or args.start is not None:  # Claude Code started in --start (default: here), reading PATH
        view = agent_view(args.agent, _target(args.start), settings,
                          file=Path(os.path.abspath(args.path)) if read else None)
    else:
        view = agent_view(args.agent, _target(args.path), settings)
    if args.debug:
        prefix = "" if view.memory is not None else f"{view.agent}: "
        for line in view.trace:
            print(f"{PROG}: debug: {prefix}{line}", file=sys.stderr)
    if args.format == "json":  # the warnings are in the document; stderr stays quiet
        sys.stdout.write(json.dumps(view.to_json(), ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    if view.memory is None:
        return _show_view(view)
    memory = view.memory
    streamed = has_too_large(memory, settings)
    for warning in show_warnings(memory, settings) if streamed else memory.warnings:
        _warn(warning)
    if streamed:  # a file over the size limit: streamed, never held in memory
        write_effective(memory, settings, sys.stdout, annotated=args.format == "annotated")
        return EXIT_OK
    out = memory.annotated() if args.format == "annotated" else memory.text
    if out:
        sys.stdout.write(out + "\n")
    if not memory.text:
        _info(_no_memory(memory, settings))
    return EXIT_OK


def _show_view(view: AgentView) -> int:
    """`show --agent claude|codex|wave` as text: the text on stdout; cuts and skips on stderr."""
    for warning in view.warnings:
        _warn(warning)
    if view.text:
        sys.stdout.write(view.text + "\n")
    else:
        looked = ", ".join(str(s.path) for s in view.sources) or "none of its files exist"
        _info(f"no memory for {view.target_dir} as {view.agent} loads it (files found: {looked}; "
              "--debug lists where it looks)")
    return EXIT_OK


def _no_memory(memory: Memory, settings: Settings) -> str:
    """What `show` says on stderr when the agent loads no memory at all (stdout stays empty)."""
    where = memory.target_dir
    if memory.sources:
        return (f"no memory for {where}: its {len(memory.sources)} memory file(s) are empty or were "
                "skipped (see the warnings above, or --debug)")
    names = " or ".join(settings.filenames)
    return (f"no memory for {where}: no {names} found in the global directory {settings.global_dir} nor in the "
            f"directories an agent loads for it (--debug lists them); save a first entry with: {PROG} add \"TEXT\"")


def cmd_add(args: argparse.Namespace) -> int:
    settings = _settings(args)
    target = _target(args.dir)
    try:
        if args.agent == "wave":
            result = save_bullet(args.text, target, settings, args.scope, allow_secret=args.allow_secret)
        else:
            result = save_entry(args.text, target, settings, args.scope, allow_secret=args.allow_secret)
    except SecretError as err:
        raise Failure(f"{err} (if it is no secret, add --allow-secret to save it anyway)") from None
    except NoProjectError as err:
        raise Failure(str(err).replace("save to global memory instead", "use --scope global")) from None
    except (EntryTextError, MemoryFileError) as err:
        raise Failure(str(err)) from None
    where = f"{result.scope.value} memory {result.path}:{result.line + 1}"
    if result.added:
        _info(f"saved to {where}" + (" (file created)" if result.created else "") + _also_loaded_by(result.path, args.agent, settings))
    else:
        _info(f"already in {where}; nothing written")
    return EXIT_OK


AGENT_TITLES = {"gemini": "Gemini CLI", "codex": "Codex", "claude": "Claude Code", "wave": "Wave", "cursor": "Cursor",
                "copilot": "Copilot CLI", "copilot-vscode": "Copilot Chat"}


def _also_loaded_by(path: Path, agent: str, settings: Settings) -> str:
    """For a save as AGENT, the other agents that load the same file (Wave's AGENTS.md is
    Codex's and, without a CLAUDE.md next to it, Claude Code's). Copilot CLI, which reads
    every one of these names, is not named: it would be on every save."""
    who = readers(path, [a for a in AGENTS if a not in (agent, "copilot", "copilot-vscode")], settings) if path.is_file() else ()
    if not who:
        return ""
    return f"; {' and '.join(AGENT_TITLES[a] for a in who)} {'load' if len(who) > 1 else 'loads'} this file too"


def cmd_list(args: argparse.Namespace) -> int:
    settings = _settings(args)
    memory = load_memory(_target(args.dir), settings)
    for warning in memory.warnings:
        _warn(warning)
    scopes = [Scope.GLOBAL, Scope.PROJECT] if args.scope == "all" else [Scope(args.scope)]
    entries = list_entries(memory, scopes)
    if args.format == "json":
        sys.stdout.write(json.dumps([e.to_json() for e in entries], ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    for e in entries:
        first, *rest = e.text.split("\n")
        sys.stdout.write(f"{e.path}:{e.line}: [{e.scope.value}] {escape_controls(first)}\n")
        for line in rest:
            sys.stdout.write(f"    {escape_controls(line)}\n")
    if not entries:
        _info("no entries")
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    settings = _settings(args)
    target = _target(args.dir)
    try:
        result = remove_entry(args.text, target, settings, args.scope, warn=_warn)
    except (EntryNotFoundError, MemoryFileError) as err:
        raise Failure(str(err).strip("'\"")) from None
    _info(f"removed from {result.scope.value} memory {result.path}:{result.line}: {result.text.splitlines()[0]}")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    settings = _settings(args)
    try:
        agents = parse_agents(args.agent) if args.agent else None
    except UnknownAgentError as err:
        raise UsageError(f"{PROG}: error: --agent: {err}") from None
    bar = terminal_progress(sys.stderr)  # drawn only on a terminal
    try:
        report = check_targets(args.paths, settings, agents, bar)
    except TargetError as err:
        raise Failure(str(err)) from None
    finally:
        if bar is not None:
            bar.close()
    if args.fix:
        _fix_drift(report.findings, settings)
        report = check_targets(args.paths, settings, agents, None)
    findings, enabled, checked_files = report.findings, report.agents, report.files
    findings = findings + [f for root in _checked_projects(args.paths, report.project_root)
                           for f in note_secret_findings(root, settings)]
    if args.format == "json":
        sys.stdout.write(findings_json(findings) + "\n")
    else:
        for f in findings:
            sys.stdout.write(f"{f.path}:{f.line}:{f.column}: {f.severity.value}: {f.message} [{f.code}]\n")
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    if args.format == "text":
        if not args.paths and report.project_root is None:
            _info("not inside a project (no .git found above the current directory): checked the files the "
                  f"current directory loads; to check every memory file under a directory: {PROG} check DIR")
        which = f" for {', '.join(enabled)}" if enabled != ("gemini",) else ""
        checked = (f"checked {len(checked_files)} memory file(s){which}: " if checked_files
                   else "no memory files found: ")
        _info(checked + (f"{len(findings)} finding(s): {errors} error(s), {warnings} warning(s)" if findings
                         else "no problems found"))
    return EXIT_FAIL if errors or (args.strict and warnings) else EXIT_OK


def findings_json(findings: Sequence[Finding]) -> str:
    """`json.dumps([f.to_json() for f in FINDINGS], ensure_ascii=False, indent=2)` byte for byte
    (docs/cli.md), written here: `json` encodes in pure Python once it indents (a third of a second
    for the large benchmark tree's 17,000 findings), and a finding is a flat object of strings and
    integers, whose values the C string encoder writes."""
    quote = json.encoder.encode_basestring  # what json.dumps uses with ensure_ascii=False
    rows = []
    for f in findings:
        d = f.to_json()
        if not all(type(v) in (str, int) for v in d.values()):  # not a flat finding: json's own encoder
            return json.dumps([f.to_json() for f in findings], ensure_ascii=False, indent=2)
        rows.append("  {\n" + ",\n".join(f"    {quote(k)}: {quote(v) if type(v) is str else v}" for k, v in d.items())
                    + "\n  }")
    return "[\n" + ",\n".join(rows) + "\n]" if rows else "[]"


def _fix_drift(findings: Sequence[Finding], settings: Settings) -> None:
    """Apply the fix of each `drift` of FINDINGS, saying on stderr what it did. A file is changed
    once per run: a drift left with a file already changed is reported by the check that follows."""
    from memory_lens.core.drift_fix import apply_drift_fix, plan_drift_fix

    changed: set[Path] = set()
    for f in findings:
        if f.code != DRIFT or changed & {f.path, f.related[0].path}:
            continue
        fix = plan_drift_fix(f.path, f.related[0].path)
        if fix is None:
            continue
        changed |= {fix.copy, fix.source}
        try:
            _info(apply_drift_fix(fix, settings.max_file_bytes))
        except MemoryFileError as err:
            _warn(str(err))


def cmd_explain(args: argparse.Namespace) -> int:
    from memory_lens.core.explain import explain

    settings = _settings(args)
    try:
        agents = parse_agents(args.agents) if args.agents else None
    except UnknownAgentError as err:
        raise UsageError(f"{PROG}: error: --agents: {err}") from None
    try:
        matrix = explain(args.path, settings, agents, _target(args.start) if args.start else None)
    except TargetError as err:
        raise Failure(str(err)) from None
    if args.format == "json":
        sys.stdout.write(json.dumps(matrix.to_json(), ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    width = max(map(len, matrix.agents))
    for f in matrix.files:
        sys.stdout.write(f"{f.path}\n")
        for agent, st in f.statuses.items():
            detail = st.reason or (f"matched by {st.matched_by}" if st.matched_by else "")
            cut = f" (cut at byte {st.cut_at})" if st.cut_at is not None and st.status != "not-loaded" else ""
            sys.stdout.write(f"  {agent:<{width}}  {st.status}{cut}{': ' + detail if detail else ''}\n")
    if not matrix.files:
        _info(f"no instruction file of {', '.join(matrix.agents)} for {matrix.path}")
    return EXIT_OK


def _checked_projects(paths: Sequence[str], project_root: Path | None) -> list[Path]:
    """The projects whose notes `check` looks at: the project checked without a PATH, and the
    project of each DIR given."""
    roots = [project_root] if project_root is not None else []
    for raw in paths:
        directory = os.path.abspath(os.path.expanduser(raw))
        root = find_project_root(Path(directory)) if os.path.isdir(directory) else None
        if root is not None and root not in roots:
            roots.append(root)
    return roots


def cmd_serve(args: argparse.Namespace) -> int:
    with collector_paused():
        from memory_lens.lsp.app import run_stdio

    run_stdio(_settings(args, lenient=True), debug=args.debug)
    return EXIT_OK


def cmd_notes(args: argparse.Namespace) -> int:
    from memory_lens.cli_notes import cmd_notes as run

    return run(args, _settings(args))


def cmd_mcp(args: argparse.Namespace) -> int:
    from memory_lens.cli_notes import cmd_mcp as run

    return run(args, _settings(args, lenient=True))


COMMANDS = {"show": cmd_show, "add": cmd_add, "list": cmd_list, "remove": cmd_remove,
            "check": cmd_check, "explain": cmd_explain, "serve": cmd_serve, "notes": cmd_notes, "mcp": cmd_mcp}


def _utf8_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(encoding="utf-8", errors="backslashreplace")
            except (ValueError, OSError):
                pass


def main(argv: Sequence[str] | None = None) -> int:
    _utf8_streams()
    parser = build_parser()
    debug = False
    try:
        if not (sys.argv[1:] if argv is None else argv):  # nothing asked: what there is to ask
            parser.print_help()
            return EXIT_OK
        args = parse_command_line(parser, argv)
        debug = bool(getattr(args, "debug", False))
        return COMMANDS[args.command](args)
    except UsageError as err:
        print(str(err), file=sys.stderr)
        return EXIT_USAGE
    except Failure as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # keep Python from complaining at exit
        except OSError:
            pass
        return EXIT_OK
    except Exception as err:  # the last guard: never a traceback for the user
        if debug:
            raise
        print(f"{PROG}: error: unexpected {type(err).__name__}: {err} (rerun with --debug for details)",
              file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    raise SystemExit(main())
