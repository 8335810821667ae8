"""Backup and restore (one archive of the note files), export and import (JSON Lines or a
Markdown bundle).

- **backup** writes the note files of one or both scopes, byte for byte (unusable ones too, so
  nothing is lost), into one `.zip` or `.tar.gz` (by its name) with a manifest,
  `memory-lens-backup.json`.
- **restore** puts them back into the current notes directories (which need not be the ones
  they came from). A file whose note is missing is written; one that is already there, the same,
  is left alone; one that differs is a conflict, reported and left alone, unless `replace`.
- **export** writes notes as JSON Lines (one note object per line, the spec's six fields) or as a
  Markdown bundle (a heading, a metadata comment and the content of each note).
- **import** reads either (auto-detected), creates the notes that are missing, leaves identical
  ones alone, and reports the others as conflicts unless `replace`. Records that are not valid
  notes are reported and skipped; everything else is still imported.

Every note written goes through the store, so through the core writer: atomic and locked.
"""

from __future__ import annotations

import functools
import io
import json
import os
import tarfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from memory_lens.core.discovery import Scope
from memory_lens.core.files import decode_memory_bytes
from memory_lens.core.notes.model import (
    MAX_FILE_BYTES,
    Note,
    NoteError,
    NoteExistsError,
    NoteFileError,
    NoteInvalidError,
    StoredNote,
    decode_note,
    now_timestamp,
    parse_scope,
    parse_timestamp,
    validate_content,
    validate_name,
    validate_tags,
)
from memory_lens.core.notes.disk import read_note_file
from memory_lens.core.notes.naming import is_note_file, note_filename
from memory_lens.core.notes.store import NotesStore
from memory_lens.core.secrets import SecretError, refuse_secrets
from memory_lens.core.writer import atomic_write

MANIFEST = "memory-lens-backup.json"
BACKUP_FORMAT = "memory-lens-notes-backup"
BUNDLE_HEADER = "<!-- memory-lens notes bundle v1 -->"
BUNDLE_MARK = "<!-- memory-lens-note "
FORMATS = ("jsonl", "markdown")


@dataclass
class TransferReport:
    """What a restore or an import did, note by note."""

    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when nothing was left out (no conflict, nothing skipped)."""
        return not self.conflicts and not self.skipped

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        return (f"{len(self.created)} created, {len(self.replaced)} replaced, {len(self.unchanged)} unchanged, "
                f"{len(self.conflicts)} conflict(s), {len(self.skipped)} skipped")


# Backup and restore ------------------------------------------------------------------------


@dataclass(frozen=True)
class BackupResult:
    path: Path
    files: dict[str, int]  # per scope

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "files": self.files}


def _note_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if is_note_file(p.name) and p.is_file())
    except OSError:
        return []


ARCHIVE_KINDS = {".zip": "zip", ".tar.gz": "tar.gz", ".tgz": "tar.gz"}


def archive_kind(archive: Path) -> str:
    """`zip` or `tar.gz`, from ARCHIVE's name; NoteInvalidError for any other name."""
    lower = archive.name.lower()
    for suffix, kind in ARCHIVE_KINDS.items():
        if lower.endswith(suffix):
            return kind
    raise NoteInvalidError(f"{archive}: name the backup .zip, .tar.gz or .tgz (its format follows the name)")


def backup(store: NotesStore, archive: Path, scopes: Sequence[Scope], force: bool = False) -> BackupResult:
    """Write every note file of SCOPES into ARCHIVE (a zip or a gzipped tar, by its name),
    atomically; an existing ARCHIVE is replaced only with FORCE."""
    kind = archive_kind(archive)
    if os.path.lexists(archive) and not force:
        raise NoteExistsError(f"{archive} already exists; use --force to overwrite it, or give another name")
    members: list[tuple[str, bytes]] = []
    counts: dict[str, int] = {}
    manifest: dict[str, Any] = {"format": BACKUP_FORMAT, "version": 1, "created_at": now_timestamp(),
                                "layout": store.settings.layout.value, "scopes": {}}
    for scope in scopes:
        loc = store.location(scope)
        files = _note_files(loc.directory)
        for path in files:
            try:
                members.append((f"{scope.value}/{path.name}", path.read_bytes()))
            except OSError as err:
                raise NoteFileError(f"{path}: cannot be read: {err.strerror or err}") from None
        counts[scope.value] = len(files)
        manifest["scopes"][scope.value] = {"directory": str(loc.directory), "files": len(files)}
    members.append((MANIFEST, (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8")))
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
            for name, data in members:
                zipped.writestr(name, data)
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
                tar.addfile(info, io.BytesIO(data))
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(archive, buffer.getvalue())
    except OSError as err:
        raise NoteFileError(f"{archive}: cannot write the backup: {err.strerror or err}") from None
    return BackupResult(archive, counts)


NOT_A_BACKUP = "not a Memory Lens notes backup"


def _archive_members(archive: Path) -> tuple[int, Iterator[tuple[str, bytes | None, str]]]:
    """How many members ARCHIVE (a zip or a tar, whatever its name) has, and (member name, its
    bytes or None, why it is skipped) of each but the manifest, which must be there. Members are
    read into memory one at a time, never extracted; a size a header understates is cut at the
    limit."""
    try:
        if zipfile.is_zipfile(archive):
            opened: Any = zipfile.ZipFile(archive)
            members = [(i.filename, not i.is_dir(), i.file_size, functools.partial(opened.open, i))
                       for i in opened.infolist()]
        else:
            opened = tarfile.open(archive, mode="r:*")
            try:
                members = [(m.name, m.isfile(), m.size, functools.partial(opened.extractfile, m))
                           for m in opened.getmembers()]
            except (tarfile.TarError, OSError, EOFError) as err:
                opened.close()
                raise NoteFileError(f"{archive}: the archive is damaged ({' '.join(str(err).split())})") from None
    except FileNotFoundError:
        raise NoteFileError(f"{archive}: no such file") from None
    except IsADirectoryError:
        raise NoteFileError(f"{archive}: is a directory; give the backup's archive file") from None
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError):
        raise NoteFileError(f"{archive}: {NOT_A_BACKUP} (not a readable .zip or .tar.gz archive)") from None
    if MANIFEST not in [m[0] for m in members]:
        opened.close()
        raise NoteFileError(f"{archive}: {NOT_A_BACKUP} (no {MANIFEST} in it)")

    def read() -> Iterator[tuple[str, bytes | None, str]]:
        with opened:
            for name, regular, size, open_member in members:
                if name == MANIFEST:
                    continue
                if not regular:
                    yield name, None, "not a regular file"
                elif size > MAX_FILE_BYTES:
                    yield name, None, f"too large ({size} bytes)"
                else:
                    try:
                        with open_member() as handle:
                            data = handle.read(MAX_FILE_BYTES + 1)
                    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, NotImplementedError,
                            RuntimeError) as err:
                        yield name, None, f"cannot be read ({' '.join(str(err).split())})"
                        continue
                    too_large = len(data) > MAX_FILE_BYTES
                    yield name, None if too_large else data, "too large" if too_large else ""

    return len(members) - 1, read()


Progress = Callable[[int, int], None]  # (records done, records in all)


class _Creations:
    """The notes a restore or an import creates, written BATCH at a time (`disk.create_files`),
    and which note each scope holds, by name: read from the index once, then kept up to date
    here, so no record lists a directory."""

    BATCH = 500

    def __init__(self, store: NotesStore, report: TransferReport) -> None:
        self.store, self.report = store, report
        self.names: dict[Scope, dict[str, str]] = {}
        self.queued: dict[Scope, dict[str, tuple[str, str, str, Callable[[], None]]]] = {}

    def existing(self, scope: Scope, name: str) -> StoredNote | None:
        """The note NAME of SCOPE, or None."""
        names = self.names.get(scope)
        if names is None:
            names = self.names[scope] = self.store.names(scope)
        fname = names.get(name)
        if fname is None:
            return None
        if fname in self.queued.get(scope, {}):
            self.flush()
        try:
            stored = read_note_file(self.store.location(scope).directory / fname, scope)
            if stored.name == name:
                return stored
        except NoteError:
            pass
        return self.store.find(name, scope)

    def create(self, scope: Scope, name: str, fname: str, text: str, label: str, where: str,
               otherwise: Callable[[], None]) -> None:
        """Create note NAME in file FNAME of SCOPE with TEXT; when that file is taken by then,
        OTHERWISE (the careful way, one note at a time) runs instead."""
        queue = self.queued.setdefault(scope, {})
        if fname in queue:
            self.flush()
        self.names[scope][name] = fname
        queue[fname] = (text, label, where, otherwise)
        if len(queue) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        for scope, queue in list(self.queued.items()):
            self.queued[scope] = {}
            try:
                taken = set(self.store.create_many(self.store.location(scope),
                                                   [(fname, item[0]) for fname, item in queue.items()]))
            except NoteError as err:
                self.report.skipped += [f"{where}: {err}" for _, _, where, _ in queue.values()]
                continue
            for fname, (_, label, where, otherwise) in queue.items():
                if fname not in taken:
                    self.report.created.append(label)
                    continue
                try:
                    otherwise()
                except NoteError as err:
                    self.report.skipped.append(f"{where}: {err}")


def restore(store: NotesStore, archive: Path, scopes: Sequence[Scope], replace: bool = False,
            progress: Progress | None = None) -> TransferReport:
    """Put the note files of ARCHIVE for SCOPES back (see the module docstring). PROGRESS is
    called after each member."""
    report = TransferReport()
    wanted = {s.value for s in scopes}
    total, members = _archive_members(archive)
    with store.bulk() as warnings:
        creations = _Creations(store, report)
        for done, (member, data, why) in enumerate(members, 1):
            _restore_member(creations, member, data, why, wanted, replace)
            if progress is not None:
                progress(done, total)
        creations.flush()
    report.warnings += warnings
    return report


def _restore_member(creations: _Creations, member: str, data: bytes | None, why: str, wanted: set[str],
                    replace: bool) -> None:
    report = creations.report
    scope_name, _, fname = member.partition("/")
    if scope_name not in ("project", "global") or "/" in fname or not is_note_file(fname):
        report.skipped.append(f"{member}: not a note file of the backup")
        return
    if scope_name not in wanted:
        return
    if data is None:
        report.skipped.append(f"{member}: {why}")
        return
    text, reason = decode_memory_bytes(data)
    if text is None:
        report.skipped.append(f"{member}: {reason}")
        return
    try:
        _restore_file(creations, Scope(scope_name), fname, text, replace, member)
    except NoteError as err:
        report.skipped.append(f"{member}: {err}")


def _restore_file(creations: _Creations, scope: Scope, fname: str, text: str, replace: bool, member: str) -> None:
    store, report = creations.store, creations.report
    loc = store.location(scope)
    try:
        note = decode_note(text, scope)
    except NoteFileError:  # not a usable note: put back as it was, by file name
        creations.flush()
        label = f"{scope.value}/{fname}"
        current = loc.directory / fname
        same = current.is_file() and _text_of(current) == text
        _write(store, loc, fname, text, replace, label, report, existed=current.exists(), same=same)
        return
    label = f"{scope.value}:{note.name}"
    existing = creations.existing(scope, note.name)
    if existing is None:
        def one_at_a_time() -> None:
            found = store.find(note.name, scope)
            if found is not None:
                _write(store, loc, found.path.name, text, replace, label, report, existed=True,
                       same=_text_of(found.path) == text)
                return
            target = fname if not (loc.directory / fname).exists() else store.free_path(loc, note.name).name
            _write(store, loc, target, text, False, label, report, existed=False, same=False)

        creations.create(scope, note.name, fname, text, label, member, one_at_a_time)
        return
    same = _text_of(existing.path) == text
    _write(store, loc, existing.path.name, text, replace, label, report, existed=True, same=same)


def _text_of(path: Path) -> str | None:
    try:
        text, _ = decode_memory_bytes(path.read_bytes())
        return text
    except OSError:
        return None


def _write(store: NotesStore, loc: Any, fname: str, text: str, replace: bool, label: str,
           report: TransferReport, existed: bool, same: bool) -> None:
    if same:
        report.unchanged.append(label)
        return
    if existed and not replace:
        report.conflicts.append(f"{label}: differs from the backup; kept (use --replace to overwrite)")
        return
    try:
        store.write_raw(loc, fname, text, replace=existed)
    except NoteExistsError:
        report.conflicts.append(f"{label}: appeared while restoring; kept (use --replace to overwrite)")
        return
    (report.replaced if existed else report.created).append(label)


# Export --------------------------------------------------------------------------------------


def export_notes(store: NotesStore, scopes: Sequence[Scope], fmt: str, tags: Sequence[str] = ()) -> tuple[str, int, list[str]]:
    """(the exported text, how many notes, warnings about skipped files) for SCOPES in FMT."""
    if fmt not in FORMATS:
        raise NoteInvalidError(f"unknown export format {fmt!r}: use jsonl or markdown")
    warnings = [str(p) for p in store.problems("both" if len(scopes) > 1 else scopes[0].value)]
    notes = [note for scope in scopes for note in store.every_note(scope, tags)]
    if fmt == "jsonl":
        text = "".join(json.dumps(n.fields(), ensure_ascii=False) + "\n" for n in notes)
    else:
        text = render_bundle(notes)
    return text, len(notes), warnings


def render_bundle(notes: Sequence[Note]) -> str:
    """Notes as one Markdown document: per note a `## name` heading, a metadata comment (the
    other fields, and how many lines of content follow) and the content as written."""
    out = [BUNDLE_HEADER, ""]
    for note in notes:
        lines = note.content.split("\n")
        meta = {"name": note.name, "scope": note.scope.value, "tags": list(note.tags),
                "created_at": note.created_at, "updated_at": note.updated_at, "lines": len(lines)}
        heading = " ".join(note.name.split())
        out += [f"## {heading}", "", BUNDLE_MARK + json.dumps(meta, ensure_ascii=False).replace("--", "-\\u002d") + " -->",
                *lines, ""]
    return "\n".join(out)


# Import --------------------------------------------------------------------------------------


def parse_records(text: str, fmt: str | None = None) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """((where, record) of every record, errors) of a JSON Lines file or a Markdown bundle."""
    if fmt is None:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        fmt = "jsonl" if first.startswith("{") else "markdown"
    if fmt == "jsonl":
        return _parse_jsonl(text)
    if fmt == "markdown":
        return _parse_bundle(text)
    raise NoteInvalidError(f"unknown import format {fmt!r}: use jsonl or markdown")


def _parse_jsonl(text: str) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    records, errors = [], []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            errors.append(f"line {number}: not valid JSON ({err.msg})")
            continue
        if not isinstance(data, dict):
            errors.append(f"line {number}: not a note object")
            continue
        records.append((f"line {number}", data))
    return records, errors


def _is_mark(line: str) -> bool:
    return line.startswith(BUNDLE_MARK) and line.rstrip().endswith("-->")


def _parse_bundle(text: str) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Records of a Markdown bundle, read in order: after each metadata comment come `lines`
    lines of content (so content may hold anything, even such a comment); a bundle edited by
    hand without `lines` has each content run to the next note's heading."""
    lines = text.split("\n")
    records: list[tuple[str, dict[str, Any]]] = []
    errors: list[str] = []
    i = 0
    while i < len(lines):
        if not _is_mark(lines[i]):
            i += 1
            continue
        raw = lines[i].rstrip()[len(BUNDLE_MARK):-3].strip()
        try:
            meta = json.loads(raw)
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except ValueError as err:
            errors.append(f"line {i + 1}: unreadable note metadata ({err})")
            i += 1
            continue
        count = meta.pop("lines", None)
        if isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= len(lines) - i - 1:
            body = lines[i + 1:i + 1 + count]
            following = i + 1 + count
        else:
            following = next((j for j in range(i + 1, len(lines)) if _is_mark(lines[j])), len(lines))
            body = lines[i + 1:following]
            while body and (not body[-1].strip() or (body[-1].startswith("## ") and following < len(lines))):
                body.pop()
        meta["content"] = "\n".join(body)
        records.append((f"line {i + 1}", meta))
        i = following
    if not records and not errors and text.strip():
        errors.append("not a Memory Lens notes bundle: no note metadata comments in it")
    return records, errors


def _note_from_record(data: dict[str, Any], scope: Scope) -> Note:
    name = validate_name(data.get("name"))
    content = validate_content(data.get("content"))
    tags = validate_tags(data.get("tags") or [])
    stamps = []
    for key in ("created_at", "updated_at"):
        value = data.get(key)
        if value is None:
            stamps.append("")
        elif isinstance(value, str) and parse_timestamp(value) is not None:
            stamps.append(value)
        else:
            raise NoteInvalidError(f"{key!r} must be an ISO-8601 UTC timestamp, not {value!r}")
    now = now_timestamp()
    created = stamps[0] or stamps[1] or now
    return Note(name, content, tags, created, stamps[1] or created, scope)


def import_notes(store: NotesStore, text: str, fmt: str | None = None, scope: Any = None,
                 replace: bool = False, progress: Progress | None = None,
                 allow_secret: bool = False) -> TransferReport:
    """Import the notes of TEXT (see the module docstring). SCOPE puts every note there;
    without it each note goes to the scope its record names (project when none). PROGRESS is
    called after each record. A note whose content holds a secret is skipped, unless ALLOW_SECRET."""
    report = TransferReport()
    forced = parse_scope(scope)
    records, errors = parse_records(text, fmt)
    report.skipped.extend(errors)
    with store.bulk() as warnings:
        creations = _Creations(store, report)
        for done, (where, data) in enumerate(records, 1):
            _import_record(creations, where, data, forced, replace, allow_secret)
            if progress is not None:
                progress(done, len(records))
        creations.flush()
    report.warnings += warnings
    return report


def _import_record(creations: _Creations, where: str, data: dict[str, Any], forced: Scope | None,
                   replace: bool, allow_secret: bool) -> None:
    store, report = creations.store, creations.report
    try:
        target = forced or parse_scope(data.get("scope") or store.default_scope().value)
        assert target is not None
        note = _note_from_record(data, target)
        store.location(target)
        refuse_secrets(note.content, allow_secret, f"note {note.name!r}: its content ")
    except (NoteError, SecretError) as err:
        report.skipped.append(f"{where}: {err}")
        return
    label = f"{target.value}:{note.name}"

    def settle(existing: StoredNote | None) -> None:
        try:
            if existing is None:
                store.insert(note)
                report.created.append(label)
            elif existing.note.content == note.content and existing.note.tags == note.tags:
                report.unchanged.append(label)
            elif not replace:
                report.conflicts.append(f"{label}: a different note of that name exists; kept "
                                        "(use --replace to overwrite)")
            else:
                store.overwrite(existing, note)
                report.replaced.append(label)
        except NoteExistsError:
            report.conflicts.append(f"{label}: appeared while importing; kept (use --replace to overwrite)")

    try:
        existing = creations.existing(target, note.name)
        if existing is None:
            creations.create(target, note.name, note_filename(note.name), note.encode(), label, where,
                             lambda: settle(store.find(note.name, target)))
        else:
            settle(existing)
    except NoteError as err:
        report.skipped.append(f"{where}: {err}")
