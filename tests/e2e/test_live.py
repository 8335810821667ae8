"""Live updates: memory changed on disk by another program shows up without a restart.

After any change the server republishes diagnostics, answers memory/effective from the new
files, and sends `memory/didChange` naming the files. It must work without any client file
event (the bare client registers no watchers; the test client never sends events unless a test
does), for the global file outside the workspace, right after `initialized`, for a new file in
the chain of an open document, and when `.git` appears. Every test runs twice: with the
system's file notifications (the default) and with the server's poller alone
(`MEMORY_LENS_WATCHER=poll`, what a system without notifications gets). Timeouts are generous
upper bounds.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Session, Workspace, wait_for


@pytest.fixture(params=["notify", "poll"])
def server_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return {"MEMORY_LENS_WATCHER": "auto" if request.param == "notify" else "poll"}


async def write_from_another_process(path: Path, text: str) -> None:
    """Write TEXT to PATH in place from a separate process, as an agent would."""
    code = "import sys; open(sys.argv[1], 'w', encoding='utf-8', newline='').write(sys.argv[2])"
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, str(path), text)
    assert await proc.wait() == 0


def codes(diags: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diags]


async def wait_effective(lsp: Session, target: Path, predicate, what: str) -> dict:
    async def check() -> dict | None:
        result = await lsp.effective(target)
        return result if predicate(result) else None

    return await wait_for(check, what=what)


async def test_memory_file_changed_by_another_process(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    package = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(target, language="python")
    await lsp.wait_diagnostics(package, lambda d: d == [])
    if not lsp.supports("workspace.did_change_watched_files.dynamic_registration"):
        assert lsp.registrations == []
    since = len(lsp.did_change)

    await write_from_another_process(package, "# Package\n- Written by an agent\n- written by an AGENT!\n")
    await lsp.wait_diagnostics(package, lambda d: codes(d) == ["duplicate"])
    await lsp.wait_changed(package, since)
    result = await wait_effective(lsp, target, lambda r: "Written by an agent" in r["text"], "the new text")
    assert result["text"].endswith("# Package\n- Written by an agent\n- written by an AGENT!")

    since = len(lsp.did_change)
    package.unlink()
    await lsp.wait_diagnostics(package, lambda d: d == [])
    await lsp.wait_changed(package, since)
    result = await lsp.effective(target)
    assert str(package) not in [s["path"] for s in result["sources"]]


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_global_file_changed(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "src" / "app.py"
    since = len(lsp.did_change)
    await write_from_another_process(ws.global_file, "# Global\n- Keep functions short\n- One more\n")
    await lsp.wait_diagnostics(ws.global_file, lambda d: d == [])
    # The project file's entry is now redundant with the global one.
    await lsp.wait_diagnostics(ws.proj / "GEMINI.md", lambda d: codes(d) == ["redundant"])
    await lsp.wait_changed(ws.global_file, since)
    await wait_effective(lsp, target, lambda r: r["text"].startswith("# Global\n- Keep functions short"), "global text")

    since = len(lsp.did_change)
    ws.global_file.unlink()
    await lsp.wait_diagnostics(ws.proj / "GEMINI.md", lambda d: d == [])
    await lsp.wait_changed(ws.global_file, since)
    result = await lsp.effective(target)
    assert [s["scope"] for s in result["sources"]] == ["project"]

    since = len(lsp.did_change)
    await write_from_another_process(ws.global_file, "- twice\n- twice\n")
    await lsp.wait_diagnostics(ws.global_file, lambda d: codes(d) == ["duplicate"])
    await lsp.wait_changed(ws.global_file, since)


async def test_changes_right_after_initialized(ws: Workspace, start: Starter) -> None:
    files = []
    for i in range(8):
        files.append(ws.write(f"work/proj/area{i}/GEMINI.md", f"- Rule {i}\n"))
    lsp = await start(wait=False)
    for i, path in enumerate(files):  # spread over the first scan and the first polls
        path.write_text(f"- Rule {i}\n- rule {i}!\n", encoding="utf-8")  # this test is another process
        await asyncio.sleep(0.04 * i)
    for path in files:
        await lsp.wait_diagnostics(path, lambda d: codes(d) == ["duplicate"])
    result = await lsp.effective(files[-1])
    assert result["text"].endswith("- Rule 7\n- rule 7!")


async def test_new_memory_file_in_the_chain_of_an_open_document(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    lsp.open(target, language="python")
    await lsp.effective(target)  # the open has been handled
    since = len(lsp.did_change)
    created = ws.proj / "pkg" / "sub" / "GEMINI.md"
    await write_from_another_process(created, "- Package rule: no globals\n- Sub rule\n")
    await lsp.wait_diagnostics(created, lambda d: codes(d) == ["redundant"])
    await lsp.wait_changed(created, since)
    result = await lsp.effective(target)
    assert [s["path"] for s in result["sources"]][-1] == str(created)


# Not VS Code: it registers file watchers (dynamic registration), and then the server leaves
# finding new files to the client's events, which this test client never sends.
@pytest.mark.clients("neovim", "neovim@v0.7.0", "bare")
async def test_new_memory_file_anywhere_without_client_watchers(lsp: Session) -> None:
    """Clients that watch no files (no dynamic registration): the server walks the workspace
    again now and then, so a memory file created outside every open chain still shows up."""
    ws = lsp.ws
    await lsp.effective(ws.proj / "src" / "app.py")
    since = len(lsp.did_change)
    created = ws.proj / "docs" / "deep" / "GEMINI.md"
    created.parent.mkdir(parents=True)
    await write_from_another_process(created, "- Docs rule\n- Docs rule\n")
    await lsp.wait_diagnostics(created, lambda d: codes(d) == ["duplicate"])
    await lsp.wait_changed(created, since)
    created.unlink()
    await lsp.wait_diagnostics(created, lambda d: d == [])


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_git_marker_created_changes_the_project_root(ws: Workspace, start: Starter) -> None:
    loose = ws.root / "work" / "loose"
    parent = ws.write("work/loose/GEMINI.md", "- Shared rule\n")
    inner = ws.write("work/loose/a/GEMINI.md", "- Shared rule\n- Own rule\n")
    target = ws.write("work/loose/a/file.py", "x = 1\n")
    lsp = await start(folders=[loose])
    lsp.open(target, language="python")
    before = await lsp.effective(target)
    assert before["projectRoot"] is None  # no root: Gemini CLI reads the target directory alone
    assert str(parent) not in [s["path"] for s in before["sources"]]
    await lsp.wait_diagnostics(inner, lambda d: d == [])
    since = len(lsp.did_change)

    (loose / ".git").mkdir()
    await lsp.wait_diagnostics(inner, lambda d: codes(d) == ["redundant"])  # the chain now starts at loose/
    result = await lsp.effective(target)
    assert result["projectRoot"] == str(loose)
    assert str(parent) in [s["path"] for s in result["sources"]]
    await wait_for(lambda: len(lsp.did_change) > since, what="memory/didChange after .git appeared")


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_client_file_events(lsp: Session) -> None:
    ws = lsp.ws
    hidden = ws.write("work/proj/deep/down/GEMINI.md", "- dup\n- dup\n")  # in no chain the server watches

    def event(path: Path, kind: types.FileChangeType) -> None:
        lsp.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=lsp.uri(path), type=kind)]))

    since = len(lsp.did_change)
    event(hidden, types.FileChangeType.Created)
    await lsp.wait_diagnostics(hidden, lambda d: codes(d) == ["duplicate"])
    await lsp.wait_changed(hidden, since)

    ws.write("work/proj/deep/down/GEMINI.md", "- dup\n")
    event(hidden, types.FileChangeType.Changed)
    await lsp.wait_diagnostics(hidden, lambda d: d == [])

    ws.write("work/proj/deep/down/GEMINI.md", "- Keep functions short\n")
    event(hidden, types.FileChangeType.Changed)
    await lsp.wait_diagnostics(hidden, lambda d: codes(d) == ["redundant"])

    since = len(lsp.did_change)
    hidden.unlink()
    event(hidden, types.FileChangeType.Deleted)
    await lsp.wait_diagnostics(hidden, lambda d: d == [])
    await lsp.wait_changed(hidden, since)

    event(ws.proj / "src" / "app.py", types.FileChangeType.Changed)  # not memory: ignored
    lsp.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri="untitled:nothing", type=types.FileChangeType.Changed)]))
    assert (await lsp.effective(ws.proj))["projectRoot"] == str(ws.proj)


async def test_watchers_are_registered_when_supported(lsp: Session) -> None:
    registrations = [r for r in lsp.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    if not lsp.supports("workspace.did_change_watched_files.dynamic_registration"):
        assert registrations == []
        return
    (registration,) = registrations
    options = registration.register_options
    watchers = options["watchers"] if isinstance(options, dict) else options.watchers
    globs = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers]
    assert "**/GEMINI.md" in globs and "**/.git" in globs


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_saved_buffer_updates_files_below_it(ws: Workspace, start: Starter) -> None:
    below = ws.write("work/proj/pkg/sub/GEMINI.md", "- Fresh rule\n")
    lsp = await start()
    await lsp.wait_diagnostics(below, lambda d: d == [])
    package = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(package)
    lsp.change(package, package.read_text(encoding="utf-8") + "- fresh RULE\n")
    lsp.save(package)
    await lsp.wait_diagnostics(below, lambda d: codes(d) == ["redundant"])


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_which_watcher_saw_the_change(ws: Workspace, start: Starter, server_env: dict[str, str]) -> None:
    """With notifications the system reports the write (the debug log says so); with
    MEMORY_LENS_WATCHER=poll the poller finds it."""
    lsp = await start(init_options={"debug": True})
    package = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(ws.proj / "pkg" / "sub" / "mod.py", language="python")
    await lsp.wait_diagnostics(package, lambda d: d == [])
    notifying = server_env["MEMORY_LENS_WATCHER"] == "auto"
    if notifying:  # a change made before the watch is on is the poller's to find
        await wait_for(lambda: any("notifications on for" in line and repr(str(package.parent)) in line
                                   for line in lsp.stderr), what="notifications on the package's directory")
    await write_from_another_process(package, "- Seen by a watcher\n- seen by a watcher\n")
    await lsp.wait_diagnostics(package, lambda d: codes(d) == ["duplicate"])
    expected = "notified by the system" if notifying else "seen by polling"

    async def logged() -> bool:
        return any(expected in line and str(package) in line for line in lsp.stderr)

    await wait_for(logged, what=f"the debug log line '{expected}'")


@pytest.mark.clients("bare")
@pytest.mark.parametrize("server_env", [{"MEMORY_LENS_WATCHER": "poll"}])
async def test_a_change_shows_while_requests_keep_coming(lsp: Session) -> None:
    """The poll waits for the client to be quiet, but not forever: requests sent back to back
    (never the quiet it waits for) do not keep a change on disk from showing."""
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    package = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(target, language="python")
    await lsp.wait_diagnostics(package, lambda d: d == [])
    since = len(lsp.did_change)
    await write_from_another_process(package, "- Seen while busy\n- seen while busy\n")
    uri, requests = lsp.uri(package), 0
    while not any(uri in batch for batch in lsp.did_change[since:]):
        await lsp.effective(target)
        requests += 1
        assert requests < 20_000, "the change never showed while requests kept coming"
    assert codes(lsp.diagnostics(package) or []) == ["duplicate"]
