"""memory/effective: the merged memory an agent loads for a document, as `memory-lens show`
gives it, for open and closed files, missing files and untitled buffers.

The server's answer does not depend on the client's capabilities: these run with VS Code's,
Neovim's and a bare client's capability sets (not also Neovim 0.7's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from .conftest import Starter
from .harness import EFFECTIVE, INVALID_PARAMS, FEATURE_CLIENTS, Session, Workspace, uri_of

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)
SOURCE_KEYS = ("path", "scope", "readable", "bytes", "tokens", "reason", "imports")


@pytest.fixture(scope="module")
def shared_ws(shared_ws: Workspace) -> Workspace:
    """The default sandbox, and in work/proj/pkg/linked a memory file and a source file that
    are links to files in work/shared."""
    shared_ws.write("work/shared/actual-GEMINI.md", "- Linked rule\n")
    shared_ws.write("work/shared/tool.py", "print()\n")
    shared_ws.symlink("work/proj/pkg/linked/GEMINI.md", shared_ws.path("work/shared/actual-GEMINI.md"))
    shared_ws.symlink("work/proj/pkg/linked/tool.py", shared_ws.path("work/shared/tool.py"))
    return shared_ws


async def assert_matches_show(lsp: Session, result: dict, directory: Path) -> None:
    """RESULT is what `memory-lens show DIRECTORY` says, in text and in json."""
    ws = lsp.ws
    _, text, _ = await ws.cli("show", str(directory))
    show = await ws.cli_json("show", str(directory))
    assert {"text", "projectRoot", "tokens", "sources"} <= set(result)
    assert result["text"] == text.removesuffix("\n") == show["text"]
    assert result["projectRoot"] == show["project_root"]
    assert [{k: s[k] for k in SOURCE_KEYS} for s in result["sources"]] == show["sources"]
    for source in result["sources"]:
        assert source["uri"] == uri_of(source["path"])
        assert isinstance(source["tokens"], int) and not isinstance(source["tokens"], bool)
        assert source["dirty"] is False
    assert isinstance(result["tokens"], int) and result["tokens"] >= 0


async def test_nested_chain_for_files_not_open(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    for target, directory in [
        (ws.proj / "pkg" / "sub" / "mod.py", ws.proj / "pkg" / "sub"),
        (ws.proj / "pkg" / "GEMINI.md", ws.proj / "pkg"),
        (ws.proj / "src" / "app.py", ws.proj / "src"),
        (ws.proj, ws.proj),
    ]:
        result = await shared_lsp.effective(target)
        await assert_matches_show(shared_lsp, result, directory)
    deep = await shared_lsp.effective(ws.proj / "pkg" / "sub" / "mod.py")
    assert [s["path"] for s in deep["sources"]] == [
        str(ws.global_file), str(ws.proj / "GEMINI.md"), str(ws.proj / "pkg" / "GEMINI.md")]
    assert [s["scope"] for s in deep["sources"]] == ["global", "project", "project"]
    assert deep["projectRoot"] == str(ws.proj)


async def test_open_file_answers_the_same(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    before = await lsp.effective(target)
    lsp.open(target, language="python")
    lsp.change(target, "VALUE = 2\n")  # unsaved edits to a file that is not memory change nothing
    assert await lsp.effective(target) == before


async def test_file_that_does_not_exist(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    result = await shared_lsp.effective(ws.proj / "pkg" / "new" / "deeper" / "notes.md")
    await assert_matches_show(shared_lsp, result, ws.proj / "pkg")  # the nearest existing directory


async def test_symlinked_files_count_where_the_link_is(shared_lsp: Session) -> None:
    """A linked memory file (seed 000 step 5.2) and a linked source file: the chain is that of
    the link's own directory, as `memory-lens show` of the link gives it."""
    linked = shared_lsp.ws.proj / "pkg" / "linked"  # see shared_ws
    for target in (linked / "GEMINI.md", linked / "tool.py"):
        result = await shared_lsp.effective(target)
        await assert_matches_show(shared_lsp, result, target)
        assert result["sources"][-1]["path"] == str(linked / "GEMINI.md")
        assert result["text"].endswith("- Linked rule")


async def test_non_file_uris_get_global_memory_only(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    for uri in ["untitled:Untitled-1", "vscode-vfs://github/owner/repo/GEMINI.md"]:
        result = await shared_lsp.effective(uri)
        assert result["projectRoot"] is None
        assert result["text"] == ws.global_file.read_text(encoding="utf-8").strip()
        assert [(s["path"], s["scope"], s["uri"]) for s in result["sources"]] == [
            (str(ws.global_file), "global", uri_of(ws.global_file))]


BAD_PARAMS = [
    {},
    {"textDocument": {}},
    {"textDocument": {"uri": 5}},
    {"textDocument": {"uri": None}},
    {"textDocument": {"uri": ""}},
    {"textDocument": "file:///tmp/x.md"},
    {"uri": "file:///tmp/x.md"},
    [1, 2],
    "file:///tmp/x.md",
    None,
]


async def test_params_without_a_string_uri_are_invalid(shared_lsp: Session) -> None:
    for params in BAD_PARAMS:
        with pytest.raises(JsonRpcException) as err:
            await shared_lsp.request(EFFECTIVE, params)
        assert err.value.code == INVALID_PARAMS, params
        result = await shared_lsp.effective(shared_lsp.ws.proj / "GEMINI.md")  # the next request is answered
        assert result["projectRoot"] == str(shared_lsp.ws.proj)
    assert shared_lsp.server_alive()


async def test_dirty_flag_for_open_memory_buffer_with_unsaved_edits(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    project_file = ws.proj / "GEMINI.md"
    disk = project_file.read_text(encoding="utf-8")
    lsp.open(project_file)
    clean = await lsp.effective(target)
    assert [s["dirty"] for s in clean["sources"]] == [False, False, False]

    lsp.change(project_file, disk + "- An idea not saved yet\n")

    def dirty_flags(result: dict) -> list[bool]:
        return [s["dirty"] for s in result["sources"]]

    dirty = await lsp.effective(target)
    assert dirty_flags(dirty) == [False, True, False]
    assert dirty["text"] == clean["text"]  # what an agent loads: the file on disk
    assert "An idea not saved yet" not in dirty["text"]

    lsp.change(project_file, disk)
    assert dirty_flags(await lsp.effective(target)) == [False, False, False]

    lsp.change(project_file, disk + "- Saved this time\n")
    lsp.save(project_file)
    saved = await lsp.effective(target)
    assert dirty_flags(saved) == [False, False, False]
    assert "- Saved this time" in saved["text"]


async def test_annotated(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    _, annotated, _ = await ws.cli("show", "--format", "annotated", str(target.parent))
    result = await shared_lsp.effective(target, annotated=True)
    assert result["annotated"] == annotated.removesuffix("\n")
    assert "annotated" not in await shared_lsp.effective(target)


async def test_no_project_root_and_unreadable_files(ws: Workspace, start: Starter) -> None:
    loose = ws.root / "work" / "loose"
    ws.write("work/GEMINI.md", "- Above the folder\n")
    (loose / "GEMINI.md").parent.mkdir(parents=True)
    (loose / "GEMINI.md").symlink_to("gone.md")  # cannot be read at all
    ws.write("work/loose/inner/GEMINI.md", "- Inner rule\n")
    ws.write("work/loose/inner/file.txt", "text\n")
    lsp = await start(folders=[loose])
    result = await lsp.effective(loose / "inner" / "file.txt")
    await assert_matches_show(lsp, result, loose / "inner")
    assert result["projectRoot"] is None
    # No project root: the target directory alone, as Gemini CLI 0.61.0 reads it.
    assert [(s["path"], s["readable"]) for s in result["sources"]] == [
        (str(ws.global_file), True), (str(loose / "inner" / "GEMINI.md"), True)]
    result = await lsp.effective(loose / "notes.txt")
    await assert_matches_show(lsp, result, loose)
    assert [(s["path"], s["readable"]) for s in result["sources"]] == [
        (str(ws.global_file), True), (str(loose / "GEMINI.md"), False)]
    assert result["sources"][1]["bytes"] == 0 and "dangling" in result["sources"][1]["reason"]


async def test_imports_expanded_and_bad_bytes_loaded(ws: Workspace, start: Starter) -> None:
    """The text has Gemini CLI's import markers; each source carries its import tree, as
    `memory-lens show --format json` gives it; a file with bad bytes is loaded as the agent does."""
    proj = ws.project("work/app")
    ws.write("work/app/GEMINI.md", "# App\n@./docs/style.md\n`@./docs/style.md` @missing.md\n")
    ws.write("work/app/docs/style.md", "Use tabs.\n")
    ws.write("work/app/src/GEMINI.md", b"- caf\xe9\n")
    lsp = await start(folders=[proj])
    result = await lsp.effective(proj / "src" / "main.py")
    await assert_matches_show(lsp, result, proj / "src")
    missing = proj / "missing.md"
    assert result["text"] == ws.global_file.read_text().strip() + "\n\n" + (
        "# App\n<!-- Imported from: ./docs/style.md -->\nUse tabs.\n\n<!-- End of import from: ./docs/style.md -->\n"
        f"`@./docs/style.md` <!-- Import failed: missing.md - ENOENT: no such file or directory, access '{missing}' -->"
        "\n\n- caf\ufffd")
    root, src = result["sources"][1:]
    assert [(i["line"], i["target"], i["status"], i["path"]) for i in root["imports"]] == [
        (2, "./docs/style.md", "imported", str(proj / "docs" / "style.md")),
        (3, "missing.md", "not-found", str(missing))]
    assert src["readable"] is True and src["imports"] == []


async def test_text_and_paths_beyond_ascii_arrive_whole(lsp: Session) -> None:
    """The answer is sent as JSON made once (`effective.sent`): its Content-Length counts bytes,
    so text and paths beyond ASCII (an accent, a character outside the BMP) arrive whole, for
    Gemini's view and for a kept Claude view asked for twice, and the stream stays in step."""
    ws = lsp.ws
    ws.write("work/proj/déjà/GEMINI.md", "- Café rule \U0001f600\n")
    ws.write("work/proj/déjà/CLAUDE.md", "- Claude café \U0001f600\n")
    ws.write("work/proj/déjà/ünï.py", "")
    target = ws.proj / "déjà" / "ünï.py"
    gemini = await lsp.effective(target)
    assert "- Café rule \U0001f600" in gemini["text"]
    assert str(ws.proj / "déjà" / "GEMINI.md") in [s["path"] for s in gemini["sources"]]
    await assert_matches_show(lsp, gemini, ws.proj / "déjà")
    for _ in range(2):
        claude = await lsp.effective(target, agent="claude")
        assert "- Claude café \U0001f600" in claude["text"]
        source = next(s for s in claude["sources"] if s["path"] == str(ws.proj / "déjà" / "CLAUDE.md"))
        assert source["uri"] == uri_of(source["path"])
