"""core/settings.py: every setting resolved in one place, explicit value > environment > the
agent's settings file > default, and passed down (the writer's size limit included)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.discovery import Scope
from memory_lens.core.entries import save_entry, write_area
from memory_lens.core.settings import Settings, SettingsError, resolve_settings


def test_every_setting_comes_from_the_environment_when_not_given() -> None:
    env = {"MEMORY_LENS_FILENAMES": "AGENTS.md,GEMINI.md", "MEMORY_LENS_GLOBAL_DIR": "/g",
           "MEMORY_LENS_BUDGET": "100", "MEMORY_LENS_MAX_FILE_SIZE": "2048",
           "MEMORY_LENS_FOLLOW_OUTSIDE_LINKS": "yes", "MEMORY_LENS_NOTES_DIR": "/n",
           "MEMORY_LENS_NOTES_LAYOUT": "aicoder"}
    s = resolve_settings(environ=env)
    assert (s.filenames, s.global_dir, s.budget_bytes, s.max_file_bytes) == (("AGENTS.md", "GEMINI.md"), Path("/g"), 100, 2048)
    assert (s.follow_outside_links, s.notes_dir, s.notes_layout) == (True, Path("/n"), "aicoder")
    given = resolve_settings(["X.md"], "/h", 5, None, env, 4096, follow_outside_links=False,
                             notes_layout="memory-lens", notes_dir="/m")
    assert (given.filenames, given.global_dir, given.budget_bytes, given.max_file_bytes) == (("X.md",), Path("/h"), 5, 4096)
    assert (given.follow_outside_links, given.notes_dir, given.notes_layout) == (False, Path("/m"), "memory-lens")
    assert resolve_settings(environ={}) == Settings(global_dir=Path.home() / ".gemini")


@pytest.mark.parametrize("value, expected", [("1", True), ("true", True), ("yes", True), ("0", False),
                                             ("", False), ("no", False)])
def test_the_environment_opts_in_to_outside_links_only_with_a_true_value(value: str, expected: bool) -> None:
    assert resolve_settings(environ={"MEMORY_LENS_FOLLOW_OUTSIDE_LINKS": value}).follow_outside_links is expected


@pytest.mark.parametrize("name, value", [("MEMORY_LENS_MAX_FILE_SIZE", "-5"), ("MEMORY_LENS_MAX_FILE_SIZE", "big"),
                                         ("MEMORY_LENS_BUDGET", "lots"), ("MEMORY_LENS_NOTES_LAYOUT", "vim"),
                                         ("MEMORY_LENS_NOTES_DIR", "relative/dir"), ("MEMORY_LENS_FILENAMES", "a/b")])
def test_an_unusable_environment_value_is_an_error_or_for_servers_a_warning(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        resolve_settings(environ={name: value})
    lenient = resolve_settings(environ={name: value}, lenient=True)
    assert lenient == resolve_settings(environ={})
    assert len(lenient.warnings) == 1 and lenient.warnings[0].startswith(f"ignoring {name}=")


def test_a_relative_notes_dir_in_the_environment_is_refused(tmp_path: Path) -> None:
    """A relative MEMORY_LENS_NOTES_DIR would mean another directory for each process's working
    directory (the CLI in one place, the servers in another)."""
    with pytest.raises(SettingsError, match="absolute"):
        resolve_settings(environ={"MEMORY_LENS_NOTES_DIR": "notes"})
    assert resolve_settings(environ={"MEMORY_LENS_NOTES_DIR": "~/notes"}).notes_dir == Path.home() / "notes"
    assert resolve_settings(environ={"MEMORY_LENS_NOTES_DIR": str(tmp_path)}).notes_dir == tmp_path


def test_the_size_limit_of_the_settings_reaches_the_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory file above the default 16 MiB limit is written when the settings raise the limit,
    with nothing in the environment."""
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv("MEMORY_LENS_MAX_FILE_SIZE", raising=False)
    (tmp_path / "p" / ".git").mkdir(parents=True)
    memory = tmp_path / "p" / "GEMINI.md"
    with open(memory, "wb") as f:
        f.write(b"# Big\n" + b"x" * (20 << 20) + b"\n")
    settings = Settings(global_dir=tmp_path / "g", max_file_bytes=64 << 20)
    assert write_area(Scope.PROJECT, tmp_path / "p", settings, memory).max_file_bytes == 64 << 20
    result = save_entry("Use tabs", tmp_path / "p", settings)
    assert result.added and os.path.getsize(memory) > 20 << 20
    with open(memory, "rb") as f:
        f.seek(-11, os.SEEK_END)
        assert f.read() == b"- Use tabs\n"


@pytest.mark.parametrize(("raw", "expected"), [("", 1.0), ("0", 0.0), ("2.5", 2.5), ("-1", 1.0), ("soon", 1.0),
                                               ("nan", 1.0)])
def test_the_progress_delay_from_the_environment(raw: str, expected: float) -> None:
    """A server-only setting: a bad value is a warning for every command, never an error."""
    settings = resolve_settings(environ={"MEMORY_LENS_PROGRESS_DELAY": raw})
    assert settings.progress_delay == expected and len(settings.warnings) == (expected == 1.0 and raw != "")


def test_the_language_server_polls_when_the_environment_says_so() -> None:
    assert resolve_settings(environ={"MEMORY_LENS_WATCHER": "poll"}).poll_watcher
    assert not resolve_settings(environ={"MEMORY_LENS_WATCHER": "auto"}).poll_watcher
