"""core/agents/budget.py: which agents are checked, and each agent's over-budget and not-loaded rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lens.core.agents import UnknownAgentError
from memory_lens.core.agents.budget import agent_findings, agent_names, chain_agents, parse_agents
from memory_lens.core.settings import Settings
from memory_lens.lsp.config import ServerConfig, parse_config, to_settings


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(tmp_path / "codex-home")}  # no config.toml: Codex's defaults


def codes(findings) -> list[tuple[int, str, str]]:
    return [(f.line, f.code, f.message.split(":")[0]) for f in findings]


def test_parse_agents_lists_commas_and_repeats() -> None:
    assert parse_agents(["codex", "gemini, claude", "codex"]) == ("codex", "gemini", "claude")
    with pytest.raises(UnknownAgentError, match="unknown agent 'nobody': use one of gemini, claude, codex, wave"):
        parse_agents(["gemini,nobody"])
    with pytest.raises(UnknownAgentError, match="no agent named"):
        parse_agents([" , "])


def test_lsp_setting_agents(tmp_path: Path) -> None:
    warnings: list[str] = []
    cfg = parse_config({"memoryLens": {"agents": ["codex", "claude"]}}, ServerConfig(), warnings.append)
    assert cfg.agents == ("codex", "claude") and warnings == []
    assert to_settings(cfg, Settings()).agents == ("codex", "claude")
    assert parse_config({"agents": "gemini,wave"}, ServerConfig(), warnings.append).agents == ("gemini", "wave")
    for bad in (["nobody"], 3, [1]):
        assert parse_config({"agents": bad}, ServerConfig(), warnings.append).agents is None
    assert len(warnings) == 3 and all(w.startswith("ignoring setting memoryLens.agents=") for w in warnings)
    assert to_settings(ServerConfig(), Settings()).agents is None


def test_default_agents_from_the_files_up_the_chain(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    target = tmp_path / "a" / "b" / "GEMINI.md"
    target.write_text("- x\n")
    assert chain_agents(target, env) == ("gemini",)
    (tmp_path / "AGENTS.override.md").write_text("- o\n")
    assert chain_agents(target, env) == ("gemini", "codex")
    (tmp_path / "a" / "CLAUDE.local.md").write_text("- c\n")
    assert chain_agents(target, env) == ("gemini", "codex", "claude")


def test_agents_md_for_gemini_only_when_no_other_agent_reads_it(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / ".git").mkdir()
    agents_md = tmp_path / "AGENTS.md"
    agents_md.write_text("- a\n")
    settings = Settings()
    assert codes(agent_findings(agents_md, ("gemini",), settings, env)) == [(1, "not-loaded", "gemini")]
    for others in (("gemini", "codex"), ("gemini", "wave")):
        assert agent_findings(agents_md, others, settings, env) == []
    configured = Settings(filenames=("GEMINI.md", "AGENTS.md"))
    assert agent_findings(agents_md, ("gemini",), configured, env) == []
    # Codex with an override next to it: shadowed; the override itself loads.
    (tmp_path / "AGENTS.override.md").write_text("- o\n")
    assert codes(agent_findings(agents_md, ("codex",), settings, env)) == [(1, "not-loaded", "codex")]
    assert agent_findings(tmp_path / "AGENTS.override.md", ("codex",), settings, env) == []


def test_codex_budget_from_config_and_claude_threshold(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / ".git").mkdir()
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text("project_doc_max_bytes = 10\n")
    agents_md = tmp_path / "AGENTS.md"
    agents_md.write_text("12345\n7890\nabc\n")  # byte 10 is on line 2
    (found,) = agent_findings(agents_md, ("codex",), Settings(), env)
    assert (found.line, found.code) == (2, "over-budget")
    assert "cuts this file at byte 10 of 15 (project_doc_max_bytes is 10" in found.message
    assert "never sees line 2 onward" in found.message
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text("é" * 40_000)  # characters, not bytes: exactly at the threshold
    assert agent_findings(claude_md, ("claude",), Settings(), env) == []
    claude_md.write_text("é" * 40_001)
    assert codes(agent_findings(claude_md, ("claude",), Settings(), env)) == [(1, "over-budget", "claude")]
    claude_md.write_text("é" * 39_999 + "\n" + "b\n")  # the 40,001st character is the b of line 2
    assert codes(agent_findings(claude_md, ("claude",), Settings(), env)) == [(2, "over-budget", "claude")]


def test_agent_names_are_every_agents_names_outside_filenames(env: dict[str, str]) -> None:
    # Whichever agents are enabled: a secret in any of them is reported (docs/security.md#secrets).
    every = ("AGENTS.override.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", ".cursorrules",
             "copilot-instructions.md")
    assert agent_names(Settings(), env) == every
    assert agent_names(Settings(agents=("codex",)), env) == every
    configured = Settings(filenames=("GEMINI.md", "AGENTS.md"), agents=("codex", "claude"))
    assert agent_names(configured, env) == tuple(n for n in every if n != "AGENTS.md")
