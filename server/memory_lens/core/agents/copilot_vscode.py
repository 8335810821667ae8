"""What GitHub Copilot Chat in VS Code attaches to a chat request about a file, by its settings.

VS Code cannot run here, so these rules come from VS Code's documentation ("Use custom
instructions in VS Code" and the "AI settings reference", both approved 7/29/2026) and its source
(`promptsServiceImpl.ts`, `computeAutomaticInstructions.ts`); pinned in docs/agents.md, each a
unit case in tests/unit/test_copilot_vscode.py:

- the workspace is the folders open in the editor (the language server's workspace folders), every
  one of them: VS Code's `promptFilesLocator` reads each folder of the window for every request,
  whichever folder the file is in. Without an editor (the command line): one folder, the nearest
  directory holding `.git`, else the start directory;
- always on, each behind its setting (all default `true`): `.github/copilot-instructions.md`
  (`github.copilot.chat.codeGeneration.useInstructionFiles`), the workspace folder's `AGENTS.md`
  (`chat.useAgentsMdFile`), and `CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md` of each
  workspace folder with `~/.claude/CLAUDE.md` (`chat.useClaudeMdFile`, sorted by path); a
  symbolic link to a file already attached is attached once;
- `*.instructions.md` under each instructions folder (`.github/instructions`, `.claude/rules`
  (any `.md`, its key `paths`, `**` when absent), `~/.copilot/instructions`, `~/.claude/rules`;
  `chat.instructionsFilesLocations` turns one off with `false` or adds one with `true`; searched
  recursively): attached when its `applyTo` matches the file (`chat.includeApplyingInstructions`,
  default `true`); every one is listed for the model, which may read it (`requestable`);
- `applyTo`: split at commas, each trimmed; `**`, `**/*` and `*` match every file; any other
  pattern not starting with `/` or `**/` gets `**/` in front, and is matched against the file's
  whole path, case aside. No `applyTo`: never attached by itself;
- nested `AGENTS.md` (`chat.useNestedAgentsMdFiles`, experimental, default `false`, and only
  with `chat.useAgentsMdFile`): every `AGENTS.md` below the workspace folder is listed for the
  model, which may read it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from memory_lens.core.agents.common import AgentSource, AgentView, decode_lossy, git_root, look, read_raw
from memory_lens.core.agents.copilot import front_matter, pattern_match, read_instruction, walk_files
from memory_lens.core.agents.scoped import split_commas
from memory_lens.core.gemini_settings import strip_json_comments

AGENT = "copilot-vscode"
LABEL = "Copilot Chat"
SKIP_DIRS = frozenset({".git", "node_modules"})
USE_INSTRUCTION_FILES = "github.copilot.chat.codeGeneration.useInstructionFiles"
USE_AGENTS_MD = "chat.useAgentsMdFile"
USE_NESTED_AGENTS_MD = "chat.useNestedAgentsMdFiles"
USE_CLAUDE_MD = "chat.useClaudeMdFile"
INCLUDE_APPLYING = "chat.includeApplyingInstructions"
LOCATIONS = "chat.instructionsFilesLocations"
# VS Code's defaults (AI settings reference; DEFAULT_INSTRUCTIONS_SOURCE_FOLDERS).
DEFAULTS: dict[str, Any] = {USE_INSTRUCTION_FILES: True, USE_AGENTS_MD: True, USE_NESTED_AGENTS_MD: False,
                            USE_CLAUDE_MD: True, INCLUDE_APPLYING: True,
                            LOCATIONS: {".github/instructions": True, ".claude/rules": True,
                                        "~/.copilot/instructions": True, "~/.claude/rules": False}}
SETTINGS = tuple(DEFAULTS)
ALL_FILES = ("**", "**/*", "*")
_TRAILING_COMMA = re.compile(r'("(?:\\.|[^"\\])*")|,(?=\s*[}\]])')


def read_settings_file(path: Path) -> tuple[dict[str, Any], str]:
    """The settings of a VS Code `settings.json` (JSON with comments and trailing commas), and
    why it cannot be read ("" when it can, or is absent)."""
    got = read_raw(path, 1024 * 1024 + 1)
    if got.missing:
        return {}, ""
    if got.reason or got.size > 1024 * 1024:
        return {}, f"{path}: {got.reason or 'over 1 MiB'}: VS Code's defaults are used"
    text = decode_lossy(got.data).lstrip("\ufeff")
    text = _TRAILING_COMMA.sub(lambda m: m.group(1) or "", strip_json_comments(text))
    try:
        data = json.loads(text)
    except ValueError as err:
        return {}, f"{path}: not JSON ({err.args[0].split(':')[0]}): VS Code's defaults are used"
    if not isinstance(data, dict):
        return {}, f"{path}: not a JSON object: VS Code's defaults are used"
    return {k: v for k, v in data.items() if k in DEFAULTS}, ""


def effective_settings(given: Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """GIVEN (setting ID to value) over VS Code's defaults; a value of the wrong type is left
    at its default, with a one-line warning each."""
    out, warnings = dict(DEFAULTS), []
    for key, value in (given or {}).items():
        if key not in DEFAULTS or value is None:
            continue
        want = dict if key == LOCATIONS else bool
        if not isinstance(value, want) or (want is dict and not all(isinstance(v, bool) for v in value.values())):
            what = "an object of folder: true/false" if want is dict else "true or false"
            warnings.append(f"{key} is {json.dumps(value)[:80]}, not {what}: Memory Lens takes VS Code's default "
                            f"({json.dumps(DEFAULTS[key])})")
            continue
        out[key] = {**DEFAULTS[LOCATIONS], **value} if want is dict else value
    return out, warnings


def _home(environ: Mapping[str, str] | None) -> Path:
    env = os.environ if environ is None else environ
    raw = env.get("HOME") or env.get("USERPROFILE")
    return Path(raw) if raw else Path.home()


def applies(pattern: str, file: Path) -> str | None:
    """The glob of PATTERN that makes VS Code attach its file for FILE (an absolute path), or
    None: VS Code's reading (computeAutomaticInstructions `_matches`), on copilot.py's globs."""
    whole = file.as_posix().lstrip("/").lower()
    for glob in split_commas(pattern):
        if glob in ALL_FILES:
            return glob
        full = glob if glob.startswith(("/", "**/")) else "**/" + glob
        if pattern_match(full.lower(), whole) is not None:
            return glob
    return None


def workspace_folders(target_dir: Path, folders: Sequence[Path] | None) -> list[Path]:
    """The folders VS Code reads instructions from: FOLDERS (those open in the editor), all of
    them; without them (the command line), the nearest directory above TARGET_DIR holding `.git`,
    else TARGET_DIR."""
    if folders:
        return list(dict.fromkeys(Path(os.path.abspath(f)) for f in folders))
    return [git_root(target_dir) or target_dir]


def _folders(roots: list[Path], home: Path, locations: Mapping[str, bool]) -> list[tuple[Path, str, bool]]:
    """The instructions folders turned on, a relative one in each workspace folder of ROOTS (as
    VS Code's `toAbsoluteLocations`): (folder, tier, Claude format)."""
    out = []
    for raw, on in locations.items():
        if not on or not isinstance(raw, str) or not raw.strip():
            continue
        raw = raw.strip().rstrip("/\\")
        user = raw.startswith("~")
        found = ([home / raw[1:].lstrip("/\\")] if user else [Path(raw)] if os.path.isabs(raw)
                 else [r / raw for r in roots])
        out += [(Path(os.path.normpath(f)), "user" if user else "workspace", f.as_posix().endswith(".claude/rules"))
                for f in found]
    return out


def _instruction(path: Path, tier: str, claude_rules: bool, file: Path | None,
                 include: bool) -> tuple[AgentSource, str]:
    source, text = read_instruction(path, tier, binary=True)
    if not source.loaded:
        return source, ""
    fm = front_matter(text, "paths" if claude_rules else "applyTo")
    pattern = fm.pattern if fm.pattern is not None else ("**" if claude_rules else None)
    key = "paths" if claude_rules else "applyTo"
    s = source
    if pattern is None or not pattern.strip():
        return AgentSource(s.path, tier, s.bytes, False, when="requestable",
                           reason=f"no {key}: never attached by itself; listed for the model, which may read it"), ""
    glob = applies(pattern, file) if file is not None else (pattern.strip() if pattern.strip() in ALL_FILES else None)
    if glob is not None and not include:
        return AgentSource(s.path, tier, s.bytes, False, when="requestable", matched_by=glob,
                           reason=f"{INCLUDE_APPLYING} is off: listed for the model, which may read it"), ""
    if glob in ALL_FILES:
        return s, text
    if glob is not None:
        return AgentSource(s.path, tier, s.bytes, True, when="on-read", matched_by=glob), text
    why = (f"{key} `{pattern}` does not match {file}" if file is not None
           else f"{key} `{pattern}`: attached when the chat works on a matching file")
    return AgentSource(s.path, tier, s.bytes, False, when="requestable",
                       reason=why + "; listed for the model, which may read it"), ""


def load_view(target_dir: Path, environ: Mapping[str, str] | None = None, file: Path | None = None,
              chat_settings: Mapping[str, Any] | None = None, folders: Sequence[Path] | None = None) -> AgentView:
    """What Copilot Chat in VS Code attaches for FILE (else for TARGET_DIR), by CHAT_SETTINGS
    (setting ID to value, as VS Code sends them; without them, the `.vscode/settings.json` of the
    workspace folder holding FILE over VS Code's defaults), with FOLDERS open in the editor
    (`workspace_folders`)."""
    roots, home = workspace_folders(target_dir, folders), _home(environ)
    asked = Path(os.path.abspath(file)) if file is not None else None
    here = asked.parent if asked is not None else target_dir
    root = max((r for r in roots if r == here or r in here.parents), key=lambda r: len(r.parts), default=roots[0])
    warnings: list[str] = []
    if chat_settings is None:
        chat_settings, why = read_settings_file(root / ".vscode" / "settings.json")
        warnings += [why] if why else []
    conf, bad = effective_settings(chat_settings)
    warnings += bad
    out: list[tuple[AgentSource, str]] = []

    def off(path: Path, tier: str, setting: str) -> None:
        look(path)
        if os.path.isfile(path):
            out.append((AgentSource(path, tier, os.path.getsize(path), False, reason=f"{setting} is off"), ""))

    for folder, tier, claude_rules in _folders(roots, home, conf[LOCATIONS]):
        keep = (lambda n: n.endswith(".md")) if claude_rules else (lambda n: n.endswith(".instructions.md"))
        out += [_instruction(p, tier, claude_rules, asked, conf[INCLUDE_APPLYING])
                for p in walk_files(folder, keep, SKIP_DIRS.__contains__) if os.path.isfile(p)]
    always: list[tuple[Path, str, str]] = [(r / ".github" / "copilot-instructions.md", "workspace",
                                            USE_INSTRUCTION_FILES) for r in roots]
    always += [(r / "AGENTS.md", "workspace", USE_AGENTS_MD) for r in roots]
    claude = [(r / n, "workspace", USE_CLAUDE_MD) for r in roots for n in ("CLAUDE.md", "CLAUDE.local.md")]
    claude += [(r / ".claude" / "CLAUDE.md", "workspace", USE_CLAUDE_MD) for r in roots]
    always += sorted([*claude, (home / ".claude" / "CLAUDE.md", "user", USE_CLAUDE_MD)], key=lambda t: t[0].as_posix())
    for path, _, _ in always:
        look(path)
    present = [p for p, _, setting in always if conf[setting] and os.path.isfile(p)]
    plain = {os.path.realpath(p) for p in present if not os.path.islink(p)}
    seen: set[str] = set()
    for path, tier, setting in always:
        if not conf[setting]:
            off(path, tier, setting)
            continue
        if path not in present:
            continue
        real = os.path.realpath(path)
        if os.path.islink(path) and (real in plain or real in seen):
            out.append((AgentSource(path, tier, os.path.getsize(path), False,
                                    reason=f"a link to {real}, which is attached once"), ""))
            continue
        seen.add(real)
        out.append(read_instruction(path, tier, binary=True))
    if conf[USE_AGENTS_MD] and conf[USE_NESTED_AGENTS_MD]:
        nested = [(p, r) for r in roots for p in walk_files(r, lambda n: n == "AGENTS.md", SKIP_DIRS.__contains__)
                  if p.parent != r]
    else:  # not listed: only those on the way to the file get a reason (no walk of the workspace)
        for d in reversed([d for d in (here, *here.parents) if root in d.parents]):
            off(d / "AGENTS.md", "nested", USE_NESTED_AGENTS_MD if conf[USE_AGENTS_MD] else USE_AGENTS_MD)
        nested = []
    for path, top in nested:
        folder = path.parent.relative_to(top).as_posix() + "/"
        under = asked is not None and path.parent in asked.parents
        source, _ = read_instruction(path, "nested", binary=True)
        if source.loaded:
            why = "" if under else (f"{asked} is not under {folder}; " if asked is not None else "")
            source = AgentSource(path, "nested", source.bytes, False, when="requestable",
                                 matched_by=folder if under else "",
                                 reason="" if under else why + f"listed for the model as the instructions for "
                                                              f"folder '{folder.rstrip('/')}'")
        out.append((source, ""))
    out.sort(key=lambda st: not st[0].loaded)  # attached first, in the order VS Code adds them
    warnings += [f"{s.path}: {s.reason}" for s, _ in out if s.reason.startswith(("a binary", "too large", "cannot"))]
    text = "\n\n".join(t.rstrip("\n") for s, t in out if s.loaded and t)
    trace = [*(f"workspace folder: {r}" for r in roots), *(f"{k}: {json.dumps(conf[k])}" for k in SETTINGS)]
    trace += [f"{s.when or 'skipped'} {s.tier} {s.path}" + (f" ({s.reason})" if s.reason else "") for s, _ in out]
    return AgentView(AGENT, target_dir, root, tuple(s for s, _ in out), text, tuple(warnings), tuple(trace))
