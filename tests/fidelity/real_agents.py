"""Drive the real agent CLIs headless and offline, and take out the instructions they send.

The CLIs are installed by `scripts/agent-clis.sh` (pinned versions, one folder each under
$MEMORY_LENS_AGENT_CACHE, default ~/.cache/memory-lens-agents). Each run gets a clean
environment: HOME and TMPDIR inside the test tree, telemetry and update checks off, the model API
pointed at a `Recorder` on 127.0.0.1 (never anywhere else), stdin from /dev/null.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Mapping

import pytest

from recorder import Recorder

CACHE = Path(os.environ.get("MEMORY_LENS_AGENT_CACHE") or Path.home() / ".cache" / "memory-lens-agents")
PINNED = {  # agent: (npm package, version, command); scripts/agent-clis.sh installs the same
    "claude": ("@anthropic-ai/claude-code", "2.1.328", "claude"),
    "codex": ("@openai/codex", "0.169.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
    "copilot": ("@github/copilot", "1.0.102", "copilot"),
}
RUN_TIMEOUT = 180  # a safety net against a hung CLI, not a timing assertion
CLAUDE_HEAD = ("<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these "
               "instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow "
               "them exactly as written.\n\n")
REMINDER_TAIL = "\n</system-reminder>"


def binary(agent: str) -> Path:
    """The installed command of AGENT; skips the test (fails it on CI) when it is not there."""
    package, version, command = PINNED[agent]
    folder = CACHE / f"{package.lstrip('@').replace('/', '-')}-{version}"
    path = folder / "node_modules" / ".bin" / command
    if path.exists() and (folder / ".installed").exists():
        return path
    missing = [name for name in ("node", "npm") if shutil.which(name) is None]
    why = (f"{' and '.join(missing)} not installed" if missing
           else f"{package}@{version} is not installed in {folder} (run scripts/agent-clis.sh)")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{why}; CI must run the real-agent suite")
    pytest.skip(why)


def clean_env(home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    tmp = home.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    node_dir = str(Path(shutil.which("node") or "/usr/bin/node").parent)
    return {"PATH": os.pathsep.join(dict.fromkeys([node_dir, "/usr/local/bin", "/usr/bin", "/bin"])),
            "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1", **extra}


def run(agent: str, args: list[str], cwd: Path, home: Path, env: Mapping[str, str]) -> None:
    proc = subprocess.run([str(binary(agent)), *args], cwd=cwd, env=clean_env(home, env),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, f"{agent} exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')[-3000:]}"


# Claude Code ------------------------------------------------------------------------------------

def claude_env(url: str, extra: Mapping[str, str] = {}) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "dummy", "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **extra}


def _texts(message: dict) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    out = []
    for block in content or []:
        if block.get("type") == "text":
            out.append(block["text"])
        elif block.get("type") == "tool_result":
            out += [c["text"] for c in block.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]
    return out


def claude_main_requests(requests: list[tuple[str, Any]]) -> list[dict]:
    return [b for p, b in requests if p.startswith("/v1/messages") and "count_tokens" not in p
            and isinstance(b, dict) and b.get("tools")]


def claude_startup(body: dict) -> str:
    """The start-up instructions of a main request, the wrapper taken off ("" when none)."""
    for text in _texts(body["messages"][0]):
        if text.startswith(CLAUDE_HEAD):
            assert text.endswith(REMINDER_TAIL), text[-200:]
            return text[len(CLAUDE_HEAD):-len(REMINDER_TAIL)]
    return ""


def claude_on_read(body: dict) -> list[str]:
    """The files attached after the `Read`, wrapper taken off: one `Contents of PATH:` block each."""
    out = []
    for message in body["messages"][2:]:
        for text in _texts(message):
            if text.startswith("<system-reminder>\nContents of "):
                inner = text[len("<system-reminder>\n"):].removesuffix("\n")
                assert inner.endswith(REMINDER_TAIL), inner[-200:]
                out.append(inner[:-len(REMINDER_TAIL)])
    return out


def run_claude(cwd: Path, home: Path, env: Mapping[str, str] = {}, read: Path | None = None
               ) -> tuple[str, list[str]]:
    """Claude Code's start-up instructions for CWD, and (with READ) what it attaches after reading READ."""
    with Recorder(read_first=None if read is None else str(read)) as rec:
        args = ["-p", "hi"] + (["--allowedTools", "Read"] if read is not None else [])
        run("claude", args, cwd, home, claude_env(rec.url, env))
    main = claude_main_requests(rec.requests)
    assert main, f"no main request recorded: {[p for p, _ in rec.requests]}"
    if read is None:
        return claude_startup(main[0]), []
    assert len(main) >= 2, "Claude Code did not come back after the Read"
    return claude_startup(main[0]), claude_on_read(main[1])


# Codex ------------------------------------------------------------------------------------------

_CODEX_DOC = re.compile(r"\A# AGENTS\.md instructions for .*?\n\n<INSTRUCTIONS>\n(.*)\n</INSTRUCTIONS>\Z", re.S)


def codex_config(url: str, extra: str = "") -> str:
    return (f'model_provider = "mock"\ncheck_for_update_on_startup = false\n{extra}\n'
            f'[model_providers.mock]\nname = "mock"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
            'env_key = "MOCK_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
            '[analytics]\nenabled = false\n[otel]\nexporter = "none"\n')


def run_codex(cwd: Path, home: Path, config: str = "") -> str:
    """The instructions Codex sends when started in CWD ("" when none). CONFIG: extra top-level
    keys of config.toml."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    with Recorder() as rec:
        (codex_home / "config.toml").write_text(codex_config(rec.url, config), encoding="utf-8")
        run("codex", ["exec", "--skip-git-repo-check", "hi"], cwd, home,
            {"CODEX_HOME": str(codex_home), "MOCK_API_KEY": "dummy"})
    bodies = [b for p, b in rec.requests if p.startswith("/v1/responses") and isinstance(b, dict)]
    assert bodies, f"no request recorded: {[p for p, _ in rec.requests]}"
    for item in bodies[0].get("input", []):
        for part in item.get("content") or [] if isinstance(item, dict) else []:
            m = _CODEX_DOC.match(part.get("text", "")) if isinstance(part, dict) else None
            if m:
                return m.group(1)
    return ""


# Gemini CLI -------------------------------------------------------------------------------------

def run_gemini(cwd: Path, home: Path, settings: dict | None = None) -> dict:
    """Gemini CLI's first generateContent request when started in CWD (its JSON body)."""
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    user = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False}, "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            **(settings or {})}
    (gemini_dir / "settings.json").write_text(json.dumps(user), encoding="utf-8")
    with Recorder() as rec:
        run("gemini", ["-m", "gemini-2.5-flash", "-p", "hi"], cwd, home,
            {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": rec.url, "GEMINI_CLI_TRUST_WORKSPACE": "true",
             "GEMINI_TELEMETRY_ENABLED": "false"})
    bodies = [b for p, b in rec.requests if "generatecontent" in p.lower() and isinstance(b, dict)]
    assert bodies, f"no request recorded: {[p for p, _ in rec.requests]}"
    return bodies[0]


def gemini_memory(body: dict) -> str:
    """The memory a Gemini request carries, wrapper taken off: the global files (system
    instruction) then the project files (first user message), joined as Gemini joins blocks."""
    system = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
    first = "".join(p.get("text", "") for p in body["contents"][0]["parts"])
    found = re.search(r"<global_context>\n(.*?)\n</global_context>", system, re.S) or \
        re.search(r"<loaded_context>\n(.*?)\n</loaded_context>\Z", system, re.S)
    project = re.search(r"<project_context>\n(.*?)\n</project_context>", first, re.S)
    return "\n\n".join(m.group(1) for m in (found, project) if m)


# Copilot CLI ------------------------------------------------------------------------------------

# Copilot's runtime unpacks ~235 MB into XDG_CACHE_HOME on its first start (~30 s): one folder for
# every run, next to the installed CLIs; HOME stays per run.
COPILOT_RUNTIME = CACHE / "copilot-runtime"
COPILOT_BEFORE, COPILOT_AFTER = "</tools>\n", "<system_notifications>\n"


def run_copilot(cwd: Path, home: Path, env: Mapping[str, str] = {}) -> str:
    """The instructions Copilot CLI sends when started in CWD: the part of its system message
    between `</tools>` and `<system_notifications>`, without the newline that opens and the one
    that closes it ("" when there are none)."""
    COPILOT_RUNTIME.mkdir(parents=True, exist_ok=True)
    with Recorder() as rec:
        run("copilot", ["-p", "hi", "--allow-all-tools"], cwd, home,
            {"XDG_CACHE_HOME": str(COPILOT_RUNTIME), "COPILOT_OFFLINE": "1", "COPILOT_AUTO_UPDATE": "false",
             "COPILOT_OTEL_ENABLED": "false", "COPILOT_PROVIDER_TYPE": "openai",
             "COPILOT_PROVIDER_BASE_URL": f"{rec.url}/v1", "COPILOT_PROVIDER_API_KEY": "dummy",
             "COPILOT_MODEL": "gpt-5", **env})
    bodies = [b for p, b in rec.requests if p.startswith("/v1/chat/completions") and isinstance(b, dict)]
    assert bodies, f"no request recorded: {[p for p, _ in rec.requests]}"
    system = bodies[0]["messages"][0]
    assert system["role"] == "system", system["role"]
    text = system["content"]
    part = text[text.index(COPILOT_BEFORE) + len(COPILOT_BEFORE):text.rindex(COPILOT_AFTER)]
    assert len(part) >= 2 and part[0] == part[-1] == "\n", repr(part[:200])
    return part[1:-1]
