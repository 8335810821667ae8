"""The `memoryLens` settings section: parsed leniently, merged in one documented order.

Order: the defaults from `memory-lens serve` (its flags and environment), then
`initializationOptions`, then `workspace/configuration` (refreshed on
`workspace/didChangeConfiguration`). A value that is missing or `null` keeps the earlier one; an
invalid value is logged once and ignored.

Workspace trust: `initializationOptions` may say `"trusted": false` (the VS Code client sends
`vscode.workspace.isTrusted`). A client that says nothing is an ordinary editor whose user opened
the folder: trusted. In an untrusted workspace the settings that choose which files are written
(`RESTRICTED`: file names, the global directory, the notes directories, following links out of
the project) keep their values from the serve command and `initializationOptions` (which the
client builds from the user's own settings) and are ignored in `workspace/configuration`, which
may carry the workspace's. The limits on work (`LIMITS`: the file size limit) are restricted the
other way: there, an untrusted workspace may lower them, never raise them. See docs/security.md.

`to_settings` turns the result into the core `Settings` (core/settings.py), the one object the
store, the checks, the writer and the notes store are given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from memory_lens.core.settings import Settings, SettingsError, parse_count, parse_dir, parse_filenames
from memory_lens.lsp.protocol import SETTINGS_SECTION


@dataclass(frozen=True)
class ServerConfig:
    """The settings a client may send (camelCase on the wire)."""

    filenames: tuple[str, ...] | None = None
    global_dir: str | None = None
    token_budget: int | None = None
    max_file_size: int | None = None  # `maxFileSize`: bytes; a bigger memory file is not read
    debug: bool = False
    notes_layout: str | None = None  # `notes.layout`: "memory-lens" or "aicoder"
    notes_global_dir: str | None = None  # `notes.globalDir`
    note_documents: bool = False  # `noteDocuments`: the client opens memory-lens-note: URIs
    follow_outside_links: bool = False  # `followOutsideLinks`: write through links out of the project
    save_preview: bool = False  # `save.preview`: save code actions carry an edit to review, not a command
    agents: tuple[str, ...] | None = None  # `agents`: checked per agent (None: those whose files exist)
    trusted: bool = True  # initializationOptions `trusted`: the workspace is trusted


# The settings that choose where the server writes: honoured from `workspace/configuration` only
# in a trusted workspace (setting name -> ServerConfig field).
RESTRICTED = {"filenames": "filenames", "globalDir": "global_dir", "notes.layout": "notes_layout",
              "notes.globalDir": "notes_global_dir", "followOutsideLinks": "follow_outside_links"}
# The limits on the work a file may cost: from `workspace/configuration` in an untrusted workspace
# only a value at or below the current one is taken (setting name -> ServerConfig field).
LIMITS = {"maxFileSize": "max_file_size"}


def section(raw: Any) -> dict:
    """The `memoryLens` object of RAW: accepts `{"memoryLens": {...}}` or the object itself."""
    if not isinstance(raw, dict):
        return {}
    inner = raw.get(SETTINGS_SECTION)
    return inner if isinstance(inner, dict) else raw


def parse_trust(raw: Any, base: ServerConfig) -> ServerConfig:
    """BASE with the workspace trust the client declares in RAW (`trusted`, beside or inside the
    `memoryLens` section). Only `false` changes anything: no message raises trust."""
    values = [raw.get("trusted")] if isinstance(raw, dict) else []
    values.append(section(raw).get("trusted"))
    return replace(base, trusted=False) if any(v is False for v in values) else base


def parse_config(raw: Any, base: ServerConfig, warn: Callable[[str], None]) -> ServerConfig:
    """BASE updated with the valid values of RAW; invalid ones are reported through WARN. When
    BASE is untrusted, the `RESTRICTED` settings of RAW are ignored, and so is a `LIMITS` value
    above BASE's (each reported through WARN)."""
    cfg = _parse_values(section(raw), parse_trust(raw, base), warn)
    if base.trusted:
        return cfg
    for name, attr in RESTRICTED.items():
        if getattr(cfg, attr) != getattr(base, attr):
            warn(f"ignoring setting memoryLens.{name} from the workspace: the workspace is not trusted "
                 "(set it in your user settings, or trust the workspace)")
            cfg = replace(cfg, **{attr: getattr(base, attr)})
    for name, attr in LIMITS.items():
        value, limit = getattr(cfg, attr), getattr(base, attr)
        if value is not None and limit is not None and value > limit:
            warn(f"ignoring setting memoryLens.{name}={value} from the workspace: the workspace is not trusted, "
                 f"and may only lower it (now {limit}; raise it in your user settings, or trust the workspace)")
            cfg = replace(cfg, **{attr: limit})
    return cfg


def _parse_values(data: dict, base: ServerConfig, warn: Callable[[str], None]) -> ServerConfig:
    cfg = base
    # The values are parsed by core.settings, as the CLI's flags and the environment are.
    for name, attr, parse in (("filenames", "filenames", parse_filenames),
                              ("globalDir", "global_dir", _checked_dir),
                              ("tokenBudget", "token_budget", lambda v: parse_count(v, 0, "tokens")),
                              ("maxFileSize", "max_file_size", lambda v: parse_count(v, 1, "bytes"))):
        value = data.get(name)
        if value is None or (name == "globalDir" and value == ""):
            continue
        try:
            cfg = replace(cfg, **{attr: parse(value)})
        except SettingsError as err:
            warn(f"ignoring setting memoryLens.{name}={value!r}: {err}")
    cfg = _parse_notes(data, cfg, warn)
    cfg = _parse_save(data, cfg, warn)
    if data.get("agents") is not None:
        cfg = _parse_agents(data["agents"], cfg, warn)
    cfg = _flag(cfg, "follow_outside_links", "followOutsideLinks", data.get("followOutsideLinks"), warn)
    return _flag(cfg, "debug", "debug", data.get("debug"), warn)


def _flag(cfg: ServerConfig, field: str, name: str, value: Any, warn: Callable[[str], None]) -> ServerConfig:
    """CFG with the boolean setting memoryLens.NAME in FIELD; unset (None) keeps it, anything but
    true or false is ignored with a warning."""
    if value is None:
        return cfg
    if isinstance(value, bool):
        return replace(cfg, **{field: value})
    warn(f"ignoring setting memoryLens.{name}={value!r}: expected true or false")
    return cfg


def _checked_dir(value: Any) -> str:
    """VALUE, once core.settings.parse_dir accepts it (kept as given: `to_settings` expands it)."""
    parse_dir(value)
    return value


def _parse_notes(data: dict, cfg: ServerConfig, warn: Callable[[str], None]) -> ServerConfig:
    """`notes: {layout, globalDir}` and the client's `noteDocuments` flag."""
    notes = data.get("notes")
    if notes is not None and not isinstance(notes, dict):
        warn(f"ignoring setting memoryLens.notes={notes!r}: expected an object such as {{\"layout\": \"aicoder\"}}")
        notes = None
    notes = notes or {}
    layout = notes.get("layout")
    if layout not in (None, ""):
        if layout in ("memory-lens", "aicoder"):
            cfg = replace(cfg, notes_layout=layout)
        else:
            warn(f"ignoring setting memoryLens.notes.layout={layout!r}: expected \"memory-lens\" or \"aicoder\"")
    directory = notes.get("globalDir")
    if directory not in (None, ""):
        if isinstance(directory, str) and "\0" not in directory:
            cfg = replace(cfg, notes_global_dir=directory)
        else:
            warn(f"ignoring setting memoryLens.notes.globalDir={directory!r}: expected a directory path")
    return _flag(cfg, "note_documents", "noteDocuments", data.get("noteDocuments"), warn)


def _parse_save(data: dict, cfg: ServerConfig, warn: Callable[[str], None]) -> ServerConfig:
    """`save: {preview}`: whether "Save selection to … memory" shows the change before writing."""
    save = data.get("save")
    if save is not None and not isinstance(save, dict):
        warn(f"ignoring setting memoryLens.save={save!r}: expected an object such as {{\"preview\": true}}")
        return cfg
    return _flag(cfg, "save_preview", "save.preview", (save or {}).get("preview"), warn)


def _parse_agents(value: Any, cfg: ServerConfig, warn: Callable[[str], None]) -> ServerConfig:
    """`agents`: a list of agent names (or one comma list), as `memory-lens check --agent`."""
    from memory_lens.core.agents import UnknownAgentError
    from memory_lens.core.agents.budget import parse_agents

    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        warn(f"ignoring setting memoryLens.agents={value!r}: expected a list such as [\"gemini\", \"codex\"]")
        return cfg
    try:
        return replace(cfg, agents=parse_agents(values))
    except UnknownAgentError as err:
        warn(f"ignoring setting memoryLens.agents={value!r}: {err}")
        return cfg


def to_settings(cfg: ServerConfig, base: Settings) -> Settings:
    """The core Settings for CFG, starting from BASE (the serve command's own settings)."""
    settings = replace(base, trusted=cfg.trusted,
                       follow_outside_links=base.follow_outside_links or cfg.follow_outside_links)
    if cfg.notes_layout:
        settings = replace(settings, notes_layout=cfg.notes_layout)
    if cfg.notes_global_dir:
        settings = replace(settings, notes_dir=parse_dir(cfg.notes_global_dir))
    if cfg.filenames:
        settings = replace(settings, filenames=cfg.filenames, filenames_explicit=True)
    if cfg.global_dir:
        settings = replace(settings, global_dir=parse_dir(cfg.global_dir))
    if cfg.token_budget is not None:
        # A token budget replaces the byte budget, as `--token-budget` alone does on the CLI.
        settings = replace(settings, budget_tokens=cfg.token_budget, budget_bytes=None)
    if cfg.max_file_size is not None:
        settings = replace(settings, max_file_bytes=cfg.max_file_size)
    if cfg.agents is not None:
        settings = replace(settings, agents=cfg.agents)
    return settings
