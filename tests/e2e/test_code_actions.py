"""textDocument/codeAction: "Save selection to project/global memory" and the quick fixes.

By default a save action carries the `memoryLens.server.save` command: running it writes the
entry to disk at once, byte for byte what `memory-lens add` makes of a copy of the same file, and
`memoryLens.server.remove` with the save's `{uri, line, text}` undoes it. With the `save.preview`
setting it carries an edit instead, applied here the way an editor applies it and compared the
same way. The shape of that edit follows the client: documentChanges with a CreateFile and a
confirmation annotation for VS Code, plain `changes` (or the command when the file must be
created) for the others.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import Starter
from .harness import (
    CMD_REMOVE,
    CMD_SAVE,
    REQUEST_FAILED,
    SAVE_GLOBAL,
    SAVE_PROJECT,
    Session,
    Workspace,
    apply_workspace_edit,
    position_at,
    text_edits_of,
    uri_of,
)

NOTES = "def main():\n    return 'hello'\n# 😀 note: Prefer café ☕ over tea\n  first line\n    second line\n"
EMOJI_SELECTION = "Prefer café ☕ over tea"
TWO_LINES = "first line\n    second line"
PREVIEW = {"memoryLens": {"save": {"preview": True}}}  # initializationOptions: the edit-based flow


def selection(lsp: Session, text: str, wanted: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (line, character) range of WANTED in TEXT, in the session's position encoding."""
    start = text.index(wanted)
    a, b = position_at(text, start, lsp.encoding), position_at(text, start + len(wanted), lsp.encoding)
    return (a.line, a.character), (b.line, b.character)


async def save_actions(lsp: Session, path: Path, wanted: str) -> dict[str, types.CodeAction]:
    """The save actions offered for WANTED selected in open document PATH, by scope."""
    text = lsp.texts[lsp.uri(path)]
    start, end = selection(lsp, text, wanted)
    actions = await lsp.code_actions(path, start, end)
    by_scope: dict[str, types.CodeAction] = {}
    for action in actions:
        scope = "project" if "project" in action.title else "global" if "global" in action.title else None
        assert scope is not None and scope not in by_scope, [a.title for a in actions]
        by_scope[scope] = action
    return by_scope


def check_edit_shape(lsp: Session, action: types.CodeAction, memory_file: Path, *, create: bool,
                     version: int | None = None) -> types.WorkspaceEdit:
    """The action's edit touches MEMORY_FILE only, in the form the client supports."""
    edit = action.edit
    assert edit is not None and action.command is None
    uri = uri_of(memory_file)
    if lsp.supports("workspace.workspace_edit.document_changes"):
        changes = list(edit.document_changes or [])
        if create:
            assert isinstance(changes[0], types.CreateFile) and changes[0].uri == uri
            assert changes[0].options is not None and changes[0].options.ignore_if_exists
            changes = changes[1:]
        assert len(changes) == 1 and isinstance(changes[0], types.TextDocumentEdit)
        assert changes[0].text_document.uri == uri
        assert changes[0].text_document.version == version
    else:
        assert not create, "a plain `changes` edit cannot create the file"
        assert edit.document_changes is None and list(edit.changes or {}) == [uri]
    edits = text_edits_of(edit)
    assert len(edits) == 1
    if lsp.supports("workspace.workspace_edit.change_annotation_support"):
        assert edit.change_annotations and len(edit.change_annotations) == 1
        (annotation_id, annotation), = edit.change_annotations.items()
        assert annotation.needs_confirmation is True and annotation.label
        assert isinstance(edits[0], types.AnnotatedTextEdit) and edits[0].annotation_id == annotation_id
        if create:
            assert edit.document_changes[0].annotation_id == annotation_id
    else:
        assert not edit.change_annotations and not isinstance(edits[0], types.AnnotatedTextEdit)
    return edit


async def test_both_actions_on_a_selection_none_on_an_empty_one(lsp: Session) -> None:
    ws = lsp.ws
    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    actions = await save_actions(lsp, app, "return 'hello'")
    assert {a.title for a in actions.values()} == {SAVE_PROJECT, SAVE_GLOBAL}
    assert all(a.kind and a.kind.startswith("refactor") for a in actions.values())

    memory = ws.proj / "pkg" / "GEMINI.md"  # a memory file is a file like any other here
    lsp.open(memory)
    assert {a.title for a in (await save_actions(lsp, memory, "no globals")).values()} == {SAVE_PROJECT, SAVE_GLOBAL}

    assert await lsp.code_actions(app, (1, 4), (1, 4)) == []  # empty selection
    assert await lsp.code_actions(app, (0, 11), (1, 4)) == []  # only whitespace
    text = lsp.texts[lsp.uri(app)]
    assert await lsp.code_actions(app, *selection(lsp, text, "()")) != []
    lsp.change(app, "- \n")
    assert await lsp.code_actions(app, (0, 0), (0, 2)) == []  # a bare list marker saves nothing


PROJECTS = {
    # name: (content of its GEMINI.md, whether it is open in the editor, the selection)
    "plain": ("# Project\n\n## Conventions\n- Run tests with pytest\n\n## Gemini Added Memories\n- The API lives in src/api\n",
              False, EMOJI_SELECTION),
    "crlf": ("# Projet déjà vu 😀\r\n\r\n## Gemini Added Memories\r\n- Première règle\r\n- Zweite Regel",
             False, TWO_LINES),
    "nosection": ("# Notes\nSome text without a final newline", False, EMOJI_SELECTION),
    "middle": ("## Gemini Added Memories\n- a rule\n  continued\n\n## Other\n- b rule\n", True, "return 'hello'"),
}


async def test_save_edits_equal_memory_lens_add(ws: Workspace, start: Starter) -> None:
    for name, (content, _, _) in PROJECTS.items():
        ws.project(f"work/{name}")
        ws.write(f"work/{name}/GEMINI.md", content)
        ws.write(f"work/{name}/notes.txt", NOTES)
    lsp = await start(folders=[ws.root / "work"], init_options=PREVIEW)
    for name, (content, is_open, wanted) in PROJECTS.items():
        memory_file = ws.root / "work" / name / "GEMINI.md"
        version = None
        if is_open:
            lsp.open(memory_file)
            version = lsp.versions[lsp.uri(memory_file)]
        notes = ws.root / "work" / name / "notes.txt"
        lsp.open(notes, language="plaintext")
        actions = await save_actions(lsp, notes, wanted)
        assert (actions["project"].title, actions["global"].title) == (SAVE_PROJECT, SAVE_GLOBAL)

        edit = check_edit_shape(lsp, actions["project"], memory_file, create=False, version=version)
        new_bytes = apply_workspace_edit(edit, lsp.encoding)
        assert new_bytes == {memory_file: await ws.cli_add_on_copy(memory_file, wanted, "project")}, name

        edit = check_edit_shape(lsp, actions["global"], ws.global_file, create=False)
        new_bytes = apply_workspace_edit(edit, lsp.encoding)
        assert new_bytes == {ws.global_file: await ws.cli_add_on_copy(ws.global_file, wanted, "global")}, name
    assert ws.read("work/plain/GEMINI.md") == PROJECTS["plain"][0]  # offering an edit writes nothing


async def test_edit_follows_the_unsaved_buffer(ws: Workspace, start: Starter) -> None:
    lsp = await start(init_options=PREVIEW)
    memory_file = ws.proj / "GEMINI.md"
    lsp.open(memory_file)
    buffer = memory_file.read_text(encoding="utf-8") + "- Typed but not saved\n"
    version = lsp.change(memory_file, buffer)
    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    actions = await save_actions(lsp, app, "return 'hello'")
    edit = check_edit_shape(lsp, actions["project"], memory_file, create=False, version=version)
    new_bytes = apply_workspace_edit(edit, lsp.encoding, buffers={lsp.uri(memory_file): buffer})
    copy = ws.write("buffer-copy/GEMINI.md", buffer)
    assert new_bytes == {memory_file: await ws.cli_add_on_copy(copy, "return 'hello'", "project")}


async def test_missing_memory_files_are_created(ws: Workspace, start: Starter) -> None:
    ws.global_file.unlink()
    fresh = ws.project("work/fresh")
    notes = ws.write("work/fresh/notes.txt", NOTES)
    lsp = await start(folders=[fresh], init_options=PREVIEW)
    lsp.open(notes, language="plaintext")
    actions = await save_actions(lsp, notes, EMOJI_SELECTION)
    for scope, memory_file in (("project", fresh / "GEMINI.md"), ("global", ws.global_file)):
        action = actions[scope]
        expected = await ws.cli_add_on_copy(memory_file, EMOJI_SELECTION, scope)
        can_create = lsp.supports("workspace.workspace_edit.document_changes") and types.ResourceOperationKind.Create in (
            lsp.caps.workspace.workspace_edit.resource_operations or [])
        if can_create:
            edit = check_edit_shape(lsp, action, memory_file, create=True)
            assert apply_workspace_edit(edit, lsp.encoding) == {memory_file: expected}
            assert not memory_file.exists()
        else:  # the fallback: a command that saves on the server
            assert action.edit is None and action.command is not None
            assert action.command.command == CMD_SAVE
            assert list(action.command.arguments) == [{"text": EMOJI_SELECTION, "scope": scope, "uri": lsp.uri(notes)}]
            await lsp.command(action.command.command, *action.command.arguments)
            assert memory_file.read_bytes() == expected


def check_save_command(lsp: Session, action: types.CodeAction, text: str, scope: str, context: Path) -> types.Command:
    """The action runs `memoryLens.server.save` for TEXT in SCOPE from document CONTEXT, and carries no edit."""
    assert action.edit is None and action.command is not None
    assert action.command.command == CMD_SAVE and action.command.title == action.title
    assert list(action.command.arguments) == [{"text": text, "scope": scope, "uri": lsp.uri(context)}]
    return action.command


async def listed(ws: Workspace, cwd: Path) -> list[dict]:
    """`memory-lens list --format json` in CWD: every entry of the chain there."""
    return await ws.cli_json("list", "--format", "json", cwd=cwd)


async def test_save_action_writes_at_once_and_remove_undoes_it(ws: Workspace, start: Starter) -> None:
    for name, (content, _, _) in PROJECTS.items():
        ws.project(f"work/{name}")
        ws.write(f"work/{name}/GEMINI.md", content)
        ws.write(f"work/{name}/notes.txt", NOTES)
    lsp = await start(folders=[ws.root / "work"])
    for name, (_, _, wanted) in PROJECTS.items():  # memory files not open (a buffer: see the unsaved test)
        project = ws.root / "work" / name
        notes = project / "notes.txt"
        lsp.open(notes, language="plaintext")
        for scope, memory_file in (("project", project / "GEMINI.md"), ("global", ws.global_file)):
            before, entries_before = memory_file.read_bytes(), await listed(ws, project)
            expected = await ws.cli_add_on_copy(memory_file, wanted, scope)
            command = check_save_command(lsp, (await save_actions(lsp, notes, wanted))[scope], wanted, scope, notes)
            saved = await lsp.command(command.command, *command.arguments)
            assert memory_file.read_bytes() == expected, (name, scope)  # on disk, no further step
            assert (saved["uri"], saved["path"], saved["scope"]) == (uri_of(memory_file), str(memory_file), scope)
            assert (saved["added"], saved.get("unsaved")) == (True, None)
            (new,) = [e for e in await listed(ws, project) if (e["path"], e["line"]) == (str(memory_file), saved["line"])]
            assert new["scope"] == scope
            assert new["text"].split() == saved["text"].split()  # `list` shows continuation lines unindented

            undone = await lsp.command(CMD_REMOVE, {"uri": saved["uri"], "line": saved["line"], "text": saved["text"]})
            assert (undone["uri"], undone["line"], undone["text"]) == (saved["uri"], saved["line"], new["text"])
            assert await listed(ws, project) == entries_before, (name, scope)
            if b"## Gemini Added Memories" in before and before.endswith(b"\n"):  # else add also ended the file
                assert memory_file.read_bytes() == before, (name, scope)


async def test_undo_removes_only_the_saved_entry(lsp: Session) -> None:
    ws = lsp.ws
    app = ws.proj / "src" / "app.py"
    memory_file = ws.proj / "GEMINI.md"
    lsp.open(app, language="python")
    before = memory_file.read_text(encoding="utf-8")
    command = check_save_command(lsp, (await save_actions(lsp, app, "return 'hello'"))["project"],
                                 "return 'hello'", "project", app)
    saved = await lsp.command(command.command, *command.arguments)
    undo = {"uri": saved["uri"], "line": saved["line"], "text": saved["text"]}
    after_save = memory_file.read_text(encoding="utf-8")

    # Lines added above it since: the same entry, further down, is still the one removed.
    memory_file.write_text("# Added on top\n\n- An entry above it\n" + after_save, encoding="utf-8")
    removed = await lsp.command(CMD_REMOVE, undo)
    assert removed["line"] == saved["line"] + 3
    assert memory_file.read_text(encoding="utf-8") == "# Added on top\n\n- An entry above it\n" + before

    # Gone already, or edited since: nothing is removed, and the command says why.
    for text in (memory_file.read_text(encoding="utf-8"),
                 after_save.replace("- return 'hello'", "- return 'hello' and more")):
        memory_file.write_text(text, encoding="utf-8")
        with pytest.raises(JsonRpcException) as err:
            await lsp.command(CMD_REMOVE, undo)
        assert err.value.code == REQUEST_FAILED and "is no longer there; nothing removed" in str(err.value)
        assert memory_file.read_text(encoding="utf-8") == text


async def test_undo_in_an_unsaved_buffer(lsp: Session) -> None:
    """A save into a memory file open with unsaved edits goes to the buffer; so does its undo."""
    if not lsp.supports("workspace.apply_edit"):
        return  # without applyEdit both write the disk, as in the tests above
    ws = lsp.ws
    memory_file = ws.proj / "GEMINI.md"
    lsp.open(memory_file)
    buffer = memory_file.read_text(encoding="utf-8") + "- Typed but not saved\n"
    lsp.change(memory_file, buffer)
    on_disk = memory_file.read_bytes()
    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    command = check_save_command(lsp, (await save_actions(lsp, app, "return 'hello'"))["project"],
                                 "return 'hello'", "project", app)
    saved = await lsp.command(command.command, *command.arguments)
    assert saved["unsaved"] is True and len(lsp.applied) == 1
    with_entry = apply_workspace_edit(lsp.applied[0].edit, lsp.encoding, buffers={lsp.uri(memory_file): buffer})
    lsp.change(memory_file, with_entry[memory_file].decode("utf-8"))
    undone = await lsp.command(CMD_REMOVE, {"uri": saved["uri"], "line": saved["line"], "text": saved["text"]})
    assert undone["unsaved"] is True and len(lsp.applied) == 2
    new_bytes = apply_workspace_edit(lsp.applied[1].edit, lsp.encoding, buffers={lsp.uri(memory_file): with_entry[memory_file].decode("utf-8")})
    assert new_bytes == {memory_file: buffer.encode("utf-8")}
    assert memory_file.read_bytes() == on_disk  # the disk was never written


async def test_global_save_from_a_document_outside_the_workspace(ws: Workspace, start: Starter) -> None:
    """The save command refuses a context URI outside the workspace; a global save does not need
    one, so the action leaves it out and the save goes through."""
    notes = ws.write("work/loose/notes.txt", NOTES)  # not under the workspace folder (the project)
    lsp = await start()
    lsp.open(notes, language="plaintext")
    action = (await save_actions(lsp, notes, EMOJI_SELECTION))["global"]
    assert action.command is not None and list(action.command.arguments) == [{"text": EMOJI_SELECTION, "scope": "global"}]
    expected = await ws.cli_add_on_copy(ws.global_file, EMOJI_SELECTION, "global")
    saved = await lsp.command(action.command.command, *action.command.arguments)
    assert (saved["path"], saved["added"]) == (str(ws.global_file), True)
    assert ws.global_file.read_bytes() == expected


async def test_preview_setting_from_workspace_configuration(ws: Workspace, start: Starter) -> None:
    lsp = await start(configuration={"memoryLens": {"save": {"preview": True}}})
    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    action = (await save_actions(lsp, app, "return 'hello'"))["project"]
    if lsp.supports("workspace.configuration"):
        check_edit_shape(lsp, action, ws.proj / "GEMINI.md", create=False)
    else:  # never asked for its settings: the default, one step
        check_save_command(lsp, action, "return 'hello'", "project", app)


async def test_already_saved_selection_says_so(lsp: Session) -> None:
    ws = lsp.ws
    notes = ws.write("work/proj/notes.txt", "use PNPM.\nkeep functions SHORT!\n")
    lsp.open(notes, language="plaintext")
    for wanted, scope, where in (("use PNPM.", "global", "GEMINI.md:3"), ("keep functions SHORT!", "project", "GEMINI.md:7")):
        actions = await save_actions(lsp, notes, wanted)
        saved = actions[scope]
        assert saved.title == f"Already saved in {scope} memory ({where})"
        assert saved.edit is None and saved.command is None
        if lsp.supports("text_document.code_action.disabled_support"):
            assert saved.disabled is not None and "Already saved" in saved.disabled.reason
        other = actions["project" if scope == "global" else "global"]
        assert other.title in (SAVE_PROJECT, SAVE_GLOBAL) and other.disabled is None


async def test_project_action_needs_a_project(ws: Workspace, start: Starter) -> None:
    loose = ws.root / "work" / "loose"
    notes = ws.write("work/loose/notes.txt", NOTES)
    lsp = await start(folders=[loose])
    lsp.open(notes, language="plaintext")
    actions = await save_actions(lsp, notes, "return 'hello'")
    assert actions["global"].title == SAVE_GLOBAL and actions["global"].disabled is None
    if lsp.supports("text_document.code_action.disabled_support"):
        project = actions["project"]
        assert project.title == SAVE_PROJECT and project.edit is None and project.command is None
        assert project.disabled is not None and "project" in project.disabled.reason
    else:
        assert "project" not in actions


QUICK_FIX_TEXT = (
    "# Project\n"
    "- Use pnpm\n"                 # 1: redundant (the global file has it)
    "- Tabs, not spaces\n"         # 2
    "  (except in YAML)\n"         # 3
    "- Keep it short\n"            # 4
    "- tabs,  NOT spaces\n"        # 5: duplicate of 2 (a two-line entry)
    "    (except in YAML).\n"      # 6
    "- Last rule\n"                # 7
)


async def test_quick_fixes_remove_duplicate_and_redundant_entries(ws: Workspace, start: Starter) -> None:
    memory_file = ws.write("work/proj/GEMINI.md", QUICK_FIX_TEXT)
    lsp = await start()
    lsp.open(memory_file)
    diags = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == 2)
    by_code = {d.code: d for d in diags}
    expected = {
        "redundant": ("Remove redundant entry", QUICK_FIX_TEXT.replace("- Use pnpm\n", "", 1)),
        "duplicate": ("Remove duplicate entry", QUICK_FIX_TEXT.replace("- tabs,  NOT spaces\n    (except in YAML).\n", "")),
    }
    for code, (title, fixed) in expected.items():
        diag = by_code[code]
        actions = await lsp.code_actions(memory_file, (diag.range.start.line, diag.range.start.character),
                                         (diag.range.end.line, diag.range.end.character), diagnostics=[diag])
        fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
        assert [a.title for a in fixes] == [title]
        fix = fixes[0]
        assert list(fix.diagnostics or []) == [diag] and fix.is_preferred
        new_bytes = apply_workspace_edit(fix.edit, lsp.encoding, buffers={lsp.uri(memory_file): QUICK_FIX_TEXT})
        assert new_bytes == {memory_file: fixed.encode("utf-8")}
        if fix.edit.document_changes:
            assert fix.edit.document_changes[0].text_document.version == lsp.versions[lsp.uri(memory_file)]

    # Applying a fix to the buffer clears its diagnostic.
    lsp.change(memory_file, expected["duplicate"][1])
    await lsp.wait_diagnostics(memory_file, lambda d: [x.code for x in d] == ["redundant"])

    # `only` filters the kinds.
    diag = by_code["redundant"]
    only_fixes = await lsp.code_actions(memory_file, (1, 2), (1, 10), diagnostics=[diag], only=["quickfix"])
    assert [a.kind for a in only_fixes] == [types.CodeActionKind.QuickFix]
    only_refactors = await lsp.code_actions(memory_file, (1, 2), (1, 10), diagnostics=[diag], only=["refactor"])
    assert only_refactors and all(a.kind.startswith("refactor") for a in only_refactors)


async def test_quick_fixes_for_stale_diagnostics_remove_nothing(ws: Workspace, start: Starter) -> None:
    """A diagnostic the client still shows after the text changed points at a line that may now
    hold another entry: its quick fix is offered only while that line holds the entry it is about."""
    memory_file = ws.write("work/proj/GEMINI.md", QUICK_FIX_TEXT)
    lsp = await start()
    lsp.open(memory_file)
    diags = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == 2)
    (duplicate,) = [d for d in diags if d.code == "duplicate"]  # the entry on lines 5-6
    lsp.change(memory_file, "- New first rule\n" + QUICK_FIX_TEXT)  # everything one line down
    await lsp.wait_diagnostics(memory_file, lambda d: [x.range.start.line for x in d] == [2, 6])

    async def fixes(diag: types.Diagnostic) -> list[types.CodeAction]:
        actions = await lsp.code_actions(memory_file, (diag.range.start.line, 0), (diag.range.start.line, 0),
                                         diagnostics=[diag])
        return [a for a in actions if a.kind == types.CodeActionKind.QuickFix]

    assert await fixes(duplicate) == []  # line 5 now holds "- Keep it short"
    assert await fixes(attrs.evolve(duplicate, data=None)) == []  # nothing to tell which entry it was about
    (fresh,) = [d for d in lsp.diagnostics(memory_file) or [] if d.code == "duplicate"]
    (fix,) = await fixes(fresh)
    buffer = lsp.texts[lsp.uri(memory_file)]
    new_bytes = apply_workspace_edit(fix.edit, lsp.encoding, buffers={lsp.uri(memory_file): buffer})
    assert new_bytes == {memory_file: buffer.replace("- tabs,  NOT spaces\n    (except in YAML).\n", "").encode("utf-8")}
