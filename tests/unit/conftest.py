"""Fixtures for the core unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home directory as `HOME`, with the agents' own home overrides cleared."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    return h
