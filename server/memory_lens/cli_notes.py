"""`memory-lens notes ...`: the notes store from the command line.

    notes create NAME [CONTENT | --file PATH | -] [--tag TAG]... [--scope project|global]
    notes read NAME [--scope project|global]
    notes list [--search QUERY] [--tag TAG]... [--scope project|global|both] [--limit N] [--cursor C]
    notes edit NAME [CONTENT | --file PATH | -] [--tag TAG]... [--no-tags] [--scope ...] [--revision REV]
    notes delete NAME [--scope project|global] [--revision REV]
    notes search QUERY [--tag TAG]... [--scope project|global|both] [--limit N] [--cursor C]
    notes backup ARCHIVE [--scope project|global|both] [--force]
    notes restore ARCHIVE [--scope project|global|both] [--replace]
    notes export [FILE|-] [--as jsonl|markdown] [--scope project|global|both] [--tag TAG]...
    notes import FILE|- [--as jsonl|markdown] [--scope project|global] [--replace]

Every subcommand takes `--dir PATH` (whose project; default: the current directory),
`--layout memory-lens|aicoder`, `--notes-dir DIR` (the global notes directory) and
`--format text|json`. Output and exit codes follow the rest of the CLI. Only argparse is imported
here: the store loads when a notes command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from memory_lens.cli_errors import PROG, Failure, UsageError

if TYPE_CHECKING:
    from memory_lens.core.notes import NotesStore, Page
    from memory_lens.core.settings import Settings


def notes_options() -> argparse.ArgumentParser:
    """The options every notes command (and `mcp`) takes."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("notes")
    group.add_argument("--dir", metavar="PATH", default=None,
                       help="a file or directory of the project whose notes to use (default: the current directory)")
    group.add_argument("--layout", choices=["memory-lens", "aicoder"], default=None,
                       help="memory-lens: .memory-lens/notes and the user config dir (default); aicoder: the "
                            "directories of AI Coder, a terminal coding agent: .aicoder/memory and "
                            "~/.config/aicoder/memory, with index.json. "
                            "Default: $MEMORY_LENS_NOTES_LAYOUT, else memory-lens")
    group.add_argument("--notes-dir", metavar="DIR", default=None,
                       help="the global notes directory (default: $MEMORY_LENS_NOTES_DIR, else the layout's)")
    group.add_argument("--follow-outside-links", action="store_true", default=None,
                       help="write through a symlink (a note file or the notes directory) even when its target is "
                            "outside the project or the global notes directory, and for `mcp` through memory files "
                            "that link out of the project; default: refuse, unless "
                            "$MEMORY_LENS_FOLLOW_OUTSIDE_LINKS=1 (see docs/security.md)")
    return common


def add_notes_parser(sub: Any, common: argparse.ArgumentParser, parser_class: type) -> None:
    """Add `notes` and its subcommands to the main parser's subparsers SUB."""
    options = notes_options()
    fmt = argparse.ArgumentParser(add_help=False)
    fmt.add_argument("--format", choices=["text", "json"], default="text",
                     help="text for people, json for scripts (on stdout)")
    parents = [common, options, fmt]
    notes = sub.add_parser("notes", help="named notes for agents (create, search, ...)",
                           description="Named notes that persist between sessions, in project and global "
                                       "scope, with tags and full-text search.")
    cmds = notes.add_subparsers(dest="notes_command", metavar="SUBCOMMAND", parser_class=parser_class)
    cmds.required = True
    write_scope = {"choices": ["project", "global"], "default": None}
    read_scope = {"choices": ["project", "global", "both"], "default": "both",
                  "help": "which notes: the project's, the global ones, or both (default)"}
    name_help = "the note's name: 1-128 characters, any language"

    p = cmds.add_parser("create", parents=parents, help="create a note",
                        description="Create note NAME. Content: CONTENT, --file PATH, or - (stdin).")
    p.add_argument("name", metavar="NAME", help=name_help)
    _content_args(p)
    p.add_argument("--tag", action="append", default=None, metavar="TAG", help="a tag; repeat for several")
    p.add_argument("--scope", **write_scope, help="default: project inside a project, else global")
    _allow_secret(p)

    p = cmds.add_parser("read", parents=parents, help="print a note",
                        description="Print note NAME: the project's, else the global one.")
    p.add_argument("name", metavar="NAME", help=name_help)
    p.add_argument("--scope", **write_scope, help="only look there (default: project, then global)")

    p = cmds.add_parser("list", parents=parents, help="list notes",
                        description="List notes, project first, by name.")
    p.add_argument("--search", default="", metavar="QUERY", help="only notes matching QUERY (see `search`)")
    p.add_argument("--tag", action="append", default=None, metavar="TAG", help="only notes with this tag (repeat: all of them)")
    p.add_argument("--scope", **read_scope)
    _page_args(p)

    p = cmds.add_parser("edit", parents=parents, help="change a note's content or tags",
                        description="Replace the content (CONTENT, --file PATH, or - for stdin) and/or the tags "
                                    "of note NAME. Without content or tags, open it in $VISUAL or $EDITOR.")
    p.add_argument("name", metavar="NAME", help=name_help)
    _content_args(p)
    p.add_argument("--tag", action="append", default=None, metavar="TAG", help="replace the tags; repeat for several")
    p.add_argument("--no-tags", action="store_true", help="remove every tag")
    p.add_argument("--scope", **write_scope, help="only look there (default: project, then global)")
    p.add_argument("--revision", default=None, metavar="REV", help="fail if the note is no longer at this revision")
    _allow_secret(p)

    p = cmds.add_parser("delete", parents=parents, help="delete a note",
                        description="Delete note NAME (the project's, else the global one).")
    p.add_argument("name", metavar="NAME", help=name_help)
    p.add_argument("--scope", **write_scope, help="only look there (default: project, then global)")
    p.add_argument("--revision", default=None, metavar="REV", help="fail if the note is no longer at this revision")

    p = cmds.add_parser("search", parents=parents, help="full-text search, best first",
                        description='Search notes, best match first (BM25; a higher score is better). QUERY: '
                                    'words (all must match), "a phrase", prefix*, AND, OR, a NOT b, '
                                    '(parentheses); see docs/notes.md#search.')
    p.add_argument("query", metavar="QUERY", help='words (all must match), "a phrase", prefix*, AND, OR, a NOT b, ( )')
    p.add_argument("--tag", action="append", default=None, metavar="TAG", help="only notes with this tag (repeat: all of them)")
    p.add_argument("--scope", **read_scope)
    _page_args(p)

    p = cmds.add_parser("backup", parents=parents, help="write the note files into one archive",
                        description="Write the note files of one or both scopes into ARCHIVE: a zip for a "
                                    ".zip name, a gzipped tar for .tar.gz or .tgz.")
    p.add_argument("archive", metavar="ARCHIVE", help="the archive file to write (.zip, .tar.gz or .tgz)")
    p.add_argument("--scope", **read_scope)
    p.add_argument("--force", action="store_true", help="overwrite ARCHIVE if it exists")

    p = cmds.add_parser("restore", parents=parents, help="put notes back from a backup",
                        description="Restore note files from ARCHIVE. A different note already there is a "
                                    "conflict, kept unless --replace.")
    p.add_argument("archive", metavar="ARCHIVE", help="an archive written by `notes backup` (.zip or .tar.gz)")
    p.add_argument("--scope", **read_scope)
    p.add_argument("--replace", action="store_true", help="overwrite notes that differ from the backup")

    p = cmds.add_parser("export", parents=parents, help="write notes as JSON Lines or Markdown",
                        description="Export notes to FILE (default: stdout) as JSON Lines or a Markdown bundle.")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="where to write (default: - for stdout)")
    p.add_argument("--as", dest="as_format", choices=["jsonl", "markdown"], default=None,
                   help="default: markdown for a .md FILE, else jsonl")
    p.add_argument("--scope", **read_scope)
    p.add_argument("--tag", action="append", default=None, metavar="TAG", help="only notes with this tag")

    p = cmds.add_parser("import", parents=parents, help="read notes from JSON Lines or Markdown",
                        description="Import notes from FILE (- for stdin). A different note of the same name "
                                    "is a conflict, kept unless --replace.")
    p.add_argument("file", metavar="FILE", help="the JSON Lines or Markdown file to read, or - for stdin")
    p.add_argument("--as", dest="as_format", choices=["jsonl", "markdown"], default=None,
                   help="default: detected from the content")
    p.add_argument("--scope", **write_scope, help="put every note there (default: each note's own scope)")
    p.add_argument("--replace", action="store_true", help="overwrite notes that differ")
    _allow_secret(p, "import notes even if their content looks like it holds a key, token or password "
                     "(default: skip them, naming the kind and position)")


def _allow_secret(p: argparse.ArgumentParser,
                  text: str = "save the note even if its content looks like it holds a key, token or password "
                              "(default: refuse, naming the kind and position)") -> None:
    p.add_argument("--allow-secret", action="store_true", help=text)


def add_mcp_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `mcp` (the MCP server on stdio) to the main parser's subparsers SUB."""
    p = sub.add_parser("mcp", parents=[common, notes_options()], help="run the MCP server on stdio",
                       description="Run the Memory Lens MCP server on stdin/stdout: notes tools (memory_create, "
                                   "memory_read, memory_list, memory_edit, memory_delete, memory_search) and "
                                   "memory-file tools (save_memory, list_memory_entries, remove_memory_entry, "
                                   "effective_memory) for the project of --dir (default: the current directory).")
    p.add_argument("--stdio", action="store_true", help="talk MCP over stdin/stdout (the default)")


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    """Serve MCP on stdio for the project of --dir."""
    from memory_lens.core.discovery import TargetError, resolve_target

    try:
        directory = resolve_target(args.dir)
    except TargetError as err:
        raise Failure(str(err)) from None
    from memory_lens.mcp_server.server import make_context, run_stdio

    run_stdio(make_context(directory, settings), debug=args.debug)
    return 0


def _content_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("content", nargs="?", default=None, metavar="CONTENT", help="the content, or - to read stdin")
    p.add_argument("--file", default=None, metavar="PATH", help="read the content from PATH")


def _page_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=_positive, default=None, metavar="N", help="at most N notes (default: all)")
    p.add_argument("--cursor", default=None, metavar="CURSOR", help="continue after a --limit page (its next_cursor)")


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return n


# Running ---------------------------------------------------------------------------------------


class _Out:
    """Where a notes command writes: stdout for results, stderr for messages."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt

    def json(self, data: Any) -> None:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")

    @staticmethod
    def info(message: str) -> None:
        print(f"{PROG}: {message}", file=sys.stderr)

    @staticmethod
    def warn(message: str) -> None:
        print(f"{PROG}: warning: {message}", file=sys.stderr)


def open_store(args: argparse.Namespace, settings: Settings) -> NotesStore:
    """The store for the command's --dir, with the notes layout and directory of SETTINGS."""
    from memory_lens.core.discovery import TargetError, resolve_target
    from memory_lens.core.notes import NotesStore, notes_settings

    try:
        target = resolve_target(args.dir)
    except TargetError as err:
        raise Failure(str(err)) from None
    return NotesStore.for_directory(target, notes_settings(settings),
                                    follow_outside_links=settings.follow_outside_links)


def cmd_notes(args: argparse.Namespace, settings: Settings) -> int:
    from memory_lens.core.notes import NoteError
    from memory_lens.core.notes.store import NoProjectError
    from memory_lens.core.secrets import SecretError

    out = _Out(args.format)
    handler = HANDLERS[args.notes_command]
    store = open_store(args, settings)
    try:
        return handler(store, args, out)
    except NoProjectError as err:
        raise Failure(err.worded("`--scope global`")) from None
    except SecretError as err:
        raise Failure(f"{err} (if it is no secret, add --allow-secret to save it anyway)") from None
    except NoteError as err:
        raise Failure(str(err)) from None
    finally:
        store.close()


def _content(args: argparse.Namespace, required: bool) -> str | None:
    if args.content is not None and args.file is not None:
        raise UsageError(f"{PROG}: error: give the content either as CONTENT or with --file, not both")
    if args.file is not None:
        try:
            data = Path(args.file).read_bytes() if args.file != "-" else sys.stdin.buffer.read()
        except OSError as err:
            raise Failure(f"{args.file}: cannot read: {err.strerror or err}") from None
        return _decode(data, args.file)
    if args.content == "-":
        return _decode(sys.stdin.buffer.read(), "stdin")
    if args.content is None and required:
        raise UsageError(f"{PROG}: error: no content: give it as CONTENT, with --file PATH, or - to read stdin")
    return args.content


def _decode(data: bytes, where: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Failure(f"{where}: not valid UTF-8 (bad byte at offset {err.start})") from None
    return text[1:] if text.startswith("\ufeff") else text


def _warn_all(out: _Out, warnings: list[str]) -> None:
    for warning in warnings:
        out.warn(warning)


def run_create(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    content = _content(args, required=True)
    assert content is not None
    result = store.create(args.name, content, args.tag or [], args.scope, allow_secret=args.allow_secret)
    _warn_all(out, result.warnings)
    if args.format == "json":
        out.json(result.note.to_json())
    else:
        out.info(f"created {result.note.scope.value} note {result.note.name!r} ({result.note.path})")
    return 0


def run_read(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    stored = store.read(args.name, args.scope)
    if args.format == "json":
        out.json(stored.to_json())
    else:
        content = stored.note.content
        sys.stdout.write(content if content.endswith("\n") or not content else content + "\n")
    return 0


def _all_pages(fetch: Callable[[int | None, str | None], Page], limit: int | None, cursor: str | None) -> Page:
    """One page when --limit or --cursor is given, else every page joined."""
    from memory_lens.core.notes import Page

    if limit is not None or cursor is not None:
        return fetch(limit, cursor)
    first = page = fetch(200, None)
    notes = list(page.notes)
    while page.next_cursor:
        page = fetch(200, page.next_cursor)
        notes.extend(page.notes)
    return Page(notes, first.total, None, first.problems)


def _print_page(page: Page, args: argparse.Namespace, out: _Out) -> int:
    for problem in page.problems:
        out.warn(str(problem))
    if args.format == "json":
        out.json(page.to_json())
        return 0
    for note in page.notes:
        where = note.scope.value + (", shadowed" if note.shadowed else "")
        tags = f" ({', '.join(note.tags)})" if note.tags else ""
        sys.stdout.write(f"[{where}] {note.name}{tags}: {note.snippet}\n")
    if not page.notes:
        out.info("no notes")
    elif page.next_cursor:
        out.info(f"{len(page.notes)} of {page.total} notes; more with --cursor {page.next_cursor}")
    return 0


def run_list(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    page = _all_pages(lambda limit, cursor: store.list(args.search, args.tag or [], args.scope, limit, cursor),
                      args.limit, args.cursor)
    return _print_page(page, args, out)


def run_search(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    page = _all_pages(lambda limit, cursor: store.search(args.query, args.scope, args.tag or [], limit, cursor),
                      args.limit, args.cursor)
    return _print_page(page, args, out)


def run_edit(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    if args.no_tags and args.tag:
        raise UsageError(f"{PROG}: error: give --tag or --no-tags, not both")
    content = _content(args, required=False)
    tags = [] if args.no_tags else args.tag
    revision = args.revision
    if content is None and tags is None:
        current = store.read(args.name, args.scope)
        edited = _edit_in_editor(current.note)
        if edited is None:
            out.info(f"no change to {current.note.scope.value} note {current.note.name!r}")
            return 0
        content, tags = edited
        revision = revision or current.revision
        args.scope = current.note.scope.value
    result = store.edit(args.name, content, args.scope, tags, revision, allow_secret=args.allow_secret)
    _warn_all(out, result.warnings)
    if args.format == "json":
        out.json(result.note.to_json())
    elif result.changed:
        out.info(f"updated {result.note.scope.value} note {result.note.name!r} ({result.note.path})")
    else:
        out.info(f"no change to {result.note.scope.value} note {result.note.name!r}")
    return 0


def _edit_in_editor(note: Any) -> tuple[str, list[str] | None] | None:
    """Open NOTE as a Markdown document in $VISUAL or $EDITOR; (content, tags) when it was
    changed, None when it was not."""
    from memory_lens.core.notes import document

    editor = os.environ.get("VISUAL", "").strip() or os.environ.get("EDITOR", "").strip()
    if not editor:
        raise Failure("no content given and no editor: set $EDITOR (or $VISUAL), or give the content "
                      "as CONTENT, with --file PATH, or - for stdin")
    original = document.render(note)
    fd, tmp = tempfile.mkstemp(prefix="memory-lens-note-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(original)
        try:
            status = subprocess.call([*shlex.split(editor), tmp])
        except OSError as err:
            raise Failure(f"cannot run the editor {editor!r}: {err.strerror or err}; check $EDITOR") from None
        if status != 0:
            raise Failure(f"the editor exited with status {status}; nothing changed")
        with open(tmp, encoding="utf-8", newline="") as fh:
            edited = fh.read()
    except UnicodeDecodeError:
        raise Failure("the edited note is not valid UTF-8; nothing changed") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    if edited == original:
        return None
    parsed = document.parse(edited)
    return parsed.content, list(parsed.tags) if parsed.tags is not None else None


def run_delete(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    result = store.delete(args.name, args.scope, args.revision)
    _warn_all(out, result.warnings)
    if args.format == "json":
        out.json(result.note.to_json())
    else:
        out.info(f"deleted {result.note.scope.value} note {result.note.name!r} ({result.note.path})")
    return 0


def _scopes(store: NotesStore, scope: str) -> list[Any]:
    from memory_lens.core.discovery import Scope

    if scope == "both":
        return [loc.scope for loc in store.locations]
    store.location(Scope(scope))
    return [Scope(scope)]


def run_backup(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    from memory_lens.core.notes import transfer

    result = transfer.backup(store, Path(os.path.abspath(args.archive)), _scopes(store, args.scope), args.force)
    if args.format == "json":
        out.json(result.to_json())
    else:
        counts = ", ".join(f"{n} {scope}" for scope, n in result.files.items())
        out.info(f"backed up {counts} note file(s) to {result.path}")
    return 0


def _report(report: Any, args: argparse.Namespace, out: _Out, verb: str) -> int:
    for line in report.conflicts:
        out.warn(f"conflict: {line}")
    for line in report.skipped:
        out.warn(f"skipped: {line}")
    _warn_all(out, report.warnings)
    if args.format == "json":
        out.json(report.to_json())
    out.info(f"{verb}: {report.summary()}")
    return 0 if report.complete else 1


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal (`terminal_progress`), erased at the end."""
    from memory_lens.terminal_progress import terminal_progress

    bar = terminal_progress(sys.stderr)
    try:
        yield (lambda done, total: bar.advance(done, total, label)) if bar else None
    finally:
        if bar:
            bar.close()


def run_restore(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    from memory_lens.core.notes import transfer

    with _progress("restored {done} of {total} archive members") as progress:
        report = transfer.restore(store, Path(args.archive), _scopes(store, args.scope), args.replace, progress)
    return _report(report, args, out, "restored")


def run_export(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    from memory_lens.core.notes import transfer
    from memory_lens.core.writer import atomic_write

    fmt = args.as_format or ("markdown" if args.file.lower().endswith((".md", ".markdown")) else "jsonl")
    text, count, warnings = transfer.export_notes(store, _scopes(store, args.scope), fmt, args.tag or [])
    _warn_all(out, [f"not exported: {w}" for w in warnings])
    if args.file == "-":
        sys.stdout.write(text)
    else:
        target = Path(os.path.abspath(args.file))
        try:
            atomic_write(target, text.encode("utf-8"))
        except OSError as err:
            raise Failure(f"{target}: cannot write: {err.strerror or err}") from None
        out.info(f"exported {count} note(s) to {target}")
    return 0


def run_import(store: NotesStore, args: argparse.Namespace, out: _Out) -> int:
    from memory_lens.core.notes import transfer

    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as err:
        raise Failure(f"{args.file}: cannot read: {err.strerror or err}") from None
    text = _decode(data, args.file)
    with _progress("imported {done} of {total} notes") as progress:
        report = transfer.import_notes(store, text, args.as_format, args.scope, args.replace, progress,
                                       allow_secret=args.allow_secret)
    return _report(report, args, out, "imported")


HANDLERS: dict[str, Callable[[Any, argparse.Namespace, _Out], int]] = {
    "create": run_create, "read": run_read, "list": run_list, "edit": run_edit, "delete": run_delete,
    "search": run_search, "backup": run_backup, "restore": run_restore, "export": run_export,
    "import": run_import,
}
