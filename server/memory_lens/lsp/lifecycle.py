"""initialize, initialized, workspace/didChangeConfiguration, workspace/didChangeWorkspaceFolders.

Settings come from `initializationOptions`, then `workspace/configuration` (when the client
supports it), refreshed on `workspace/didChangeConfiguration`. After `initialized` the server
starts the background workspace scan (`LiveEngine`) and its watch (`Watcher.start`: the disk
poller, the rescan and the client's file watchers); `shutdown` stops the watch.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.lsp.protocol import SETTINGS_SECTION

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

log = logging.getLogger("memory_lens.lsp")


async def pull_configuration(ls: MemoryLensServer) -> bool:
    """Ask the client for the `memoryLens` section and VS Code's chat settings (one item each of
    `copilot_vscode.SETTINGS`, for the copilot-vscode view); True when either changed."""
    if not ls.supports("workspace.configuration"):
        return False
    from memory_lens.core.agents.copilot_vscode import SETTINGS

    items = [types.ConfigurationItem(section=section) for section in (SETTINGS_SECTION, *SETTINGS)]
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=10)
    except Exception as err:
        ls.warn_once(f"could not read the {SETTINGS_SECTION} settings from the client: {err}")
        return False
    if not result:
        return False
    chat_changed = ls.update_chat_settings(list(result[1:]))
    return ls.update_config(result[0]) or chat_changed


def register(server: MemoryLensServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: MemoryLensServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        if params.initialization_options is not None:
            from memory_lens.lsp.convert import json_values

            ls.update_config(json_values(params.initialization_options), initial=True)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemoryLensServer, params: types.InitializedParams) -> None:
        ls.live.request_full()
        await ls.watcher.start()
        if await pull_configuration(ls):
            ls.live.request_full()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MemoryLensServer, params: types.DidChangeConfigurationParams) -> None:
        from memory_lens.lsp.convert import json_values

        changed = ls.update_config(json_values(params.settings)) if params.settings else False
        changed = await pull_configuration(ls) or changed
        if changed:
            await ls.watcher.on_config_change()
            ls.live.request_full()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: MemoryLensServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.live.request_full()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MemoryLensServer, params: None) -> None:
        ls.watcher.stop()
        if ls.notes_hub is not None:
            ls.notes_hub.close()
