"""memory_lens.lsp.config: the `memoryLens` settings, parsed leniently and merged in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lens.core.settings import DEFAULT_BUDGET_BYTES, Settings
from memory_lens.lsp.config import ServerConfig, parse_config, section, to_settings

BASE = ServerConfig()


def parse(raw: object, base: ServerConfig = BASE) -> tuple[ServerConfig, list[str]]:
    warnings: list[str] = []
    return parse_config(raw, base, warnings.append), warnings


@pytest.mark.parametrize("raw, expected", [
    ({"memoryLens": {"debug": True}}, {"debug": True}),
    ({"debug": True}, {"debug": True}),
    ({"memoryLens": "AGENTS.md", "debug": True}, {"memoryLens": "AGENTS.md", "debug": True}),
    (None, {}),
    (["filenames"], {}),
    ("memoryLens", {}),
])
def test_section(raw: object, expected: dict) -> None:
    assert section(raw) == expected


def test_valid_values() -> None:
    cfg, warnings = parse({"memoryLens": {"filenames": [" AGENTS.md", "GEMINI.md", "AGENTS.md"],
                                          "globalDir": "~/agents", "tokenBudget": 0, "debug": True}})
    assert warnings == []
    assert cfg == ServerConfig(filenames=("AGENTS.md", "GEMINI.md"), global_dir="~/agents", token_budget=0, debug=True)


def test_filenames_as_a_comma_separated_string() -> None:
    cfg, warnings = parse({"filenames": "AGENTS.md, GEMINI.md,,"})
    assert warnings == [] and cfg.filenames == ("AGENTS.md", "GEMINI.md")


@pytest.mark.parametrize("name, value", [
    ("filenames", ["a/b.md"]),
    ("filenames", ["..", "GEMINI.md"]),
    ("filenames", []),
    ("filenames", ""),
    ("filenames", [1, 2]),
    ("filenames", {"GEMINI.md": True}),
    ("globalDir", 5),
    ("globalDir", ["~/x"]),
    ("globalDir", "/home/me/a\0b"),  # no path has a NUL byte: every use of it would fail
    ("tokenBudget", -1),
    ("tokenBudget", True),
    ("tokenBudget", 1.5),
    ("tokenBudget", "100"),
    ("debug", "yes"),
    ("debug", 1),
    ("followOutsideLinks", "true"),
    ("noteDocuments", 0),
])
def test_invalid_values_are_reported_and_ignored(name: str, value: object) -> None:
    base = ServerConfig(filenames=("CONTEXT.md",), global_dir="/g", token_budget=7, debug=True)
    cfg, warnings = parse({"memoryLens": {name: value}}, base)
    assert cfg == base
    assert len(warnings) == 1 and f"memoryLens.{name}" in warnings[0]


@pytest.mark.parametrize("field, shown", [
    ("follow_outside_links", "followOutsideLinks"),
    ("note_documents", "noteDocuments"),
    ("save_preview", "save.preview"),
])
def test_boolean_settings_apply_and_refuse_other_values(field: str, shown: str) -> None:
    base = ServerConfig()

    def raw(value: object) -> dict:
        return {"save": {"preview": value}} if shown == "save.preview" else {shown: value}

    flipped = not getattr(base, field)
    cfg, warnings = parse({"memoryLens": raw(flipped)}, base)
    assert warnings == [] and getattr(cfg, field) is flipped
    cfg, warnings = parse({"memoryLens": raw("no")}, base)
    assert cfg == base and len(warnings) == 1 and f"memoryLens.{shown}='no'" in warnings[0]


def test_missing_null_and_empty_values_keep_the_earlier_ones() -> None:
    base = ServerConfig(filenames=("CONTEXT.md",), global_dir="/g", token_budget=7, debug=True)
    for raw in ({}, {"memoryLens": {}}, {"filenames": None, "globalDir": None, "tokenBudget": None, "debug": None},
                {"globalDir": ""}, {"unknown": 1}):
        assert parse(raw, base) == (base, [])


def test_each_update_starts_from_the_base() -> None:
    """The server parses workspace/configuration over the initializationOptions each time, so a
    setting dropped from the client's configuration falls back to the initial value."""
    initial, _ = parse({"memoryLens": {"filenames": ["AGENTS.md"], "tokenBudget": 10}})
    first, _ = parse({"memoryLens": {"tokenBudget": 20, "debug": True}}, initial)
    assert first == ServerConfig(filenames=("AGENTS.md",), token_budget=20, debug=True)
    second, _ = parse({"memoryLens": {}}, initial)
    assert second == initial


def test_to_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    base = Settings(filenames=("GEMINI.md",), global_dir=tmp_path / ".gemini")
    assert to_settings(ServerConfig(), base) == base
    assert to_settings(ServerConfig(debug=True), base) == base
    resolved = to_settings(ServerConfig(filenames=("AGENTS.md", "GEMINI.md"), global_dir="~/agents"), base)
    assert resolved.filenames == ("AGENTS.md", "GEMINI.md")
    assert resolved.global_dir == tmp_path / "agents" and resolved.global_dir.is_absolute()
    assert resolved.budget_bytes == DEFAULT_BUDGET_BYTES and resolved.budget_tokens is None

    relative = to_settings(ServerConfig(global_dir="rel/dir"), base)
    assert relative.global_dir.is_absolute() and relative.global_dir.parts[-2:] == ("rel", "dir")

    budget = to_settings(ServerConfig(token_budget=100), base)
    assert (budget.budget_bytes, budget.budget_tokens) == (None, 100)  # as `--token-budget` alone


def test_notes_settings_and_the_note_documents_flag() -> None:
    cfg, warnings = parse({"memoryLens": {"notes": {"layout": "aicoder", "globalDir": "~/notes"}, "noteDocuments": True}})
    assert warnings == []
    assert (cfg.notes_layout, cfg.notes_global_dir, cfg.note_documents) == ("aicoder", "~/notes", True)
    kept, warnings = parse({"notes": {"layout": "vim", "globalDir": 3}, "noteDocuments": "yes"}, cfg)
    assert (kept.notes_layout, kept.notes_global_dir, kept.note_documents) == ("aicoder", "~/notes", True)
    assert len(warnings) == 3 and all("ignoring setting memoryLens." in w for w in warnings)
    assert parse({"notes": "aicoder"})[1] == [
        "ignoring setting memoryLens.notes='aicoder': expected an object such as {\"layout\": \"aicoder\"}"]


def test_follow_outside_links_is_a_boolean_setting() -> None:
    cfg, warnings = parse({"memoryLens": {"followOutsideLinks": True}})
    assert cfg.follow_outside_links is True and warnings == []
    cfg, warnings = parse({"followOutsideLinks": "yes"})
    assert cfg.follow_outside_links is False and "followOutsideLinks" in warnings[0]


def test_an_untrusted_workspace_keeps_the_settings_that_choose_where_to_write() -> None:
    """Trust comes from initializationOptions (`trusted: false`); later settings (the workspace's,
    through workspace/configuration) cannot change file names, directories or the opt-in."""
    init, warnings = parse({"memoryLens": {"globalDir": "/user/choice", "filenames": ["AGENTS.md"]}, "trusted": False})
    assert warnings == [] and init.trusted is False and init.global_dir == "/user/choice"
    later, warnings = parse({"memoryLens": {"globalDir": "/planted", "filenames": ["EVIL.md"], "followOutsideLinks": True,
                                            "notes": {"layout": "aicoder", "globalDir": "/x"}, "tokenBudget": 5,
                                            "trusted": True}}, init)
    assert (later.global_dir, later.filenames, later.follow_outside_links) == ("/user/choice", ("AGENTS.md",), False)
    assert (later.notes_layout, later.notes_global_dir, later.trusted) == (None, None, False)
    assert later.token_budget == 5  # settings that choose no file still apply
    assert len(warnings) == 5 and all("the workspace is not trusted" in w for w in warnings)


def test_a_client_that_says_nothing_is_trusted_and_trust_is_never_raised() -> None:
    cfg, _ = parse({"memoryLens": {"globalDir": "/g"}})
    assert cfg.trusted is True
    later, _ = parse({"memoryLens": {"globalDir": "/h"}}, cfg)
    assert later.global_dir == "/h"
    untrusted, _ = parse({"memoryLens": {"trusted": False}})
    assert untrusted.trusted is False
    assert parse({"trusted": True}, untrusted)[0].trusted is False


def test_an_untrusted_workspace_may_lower_the_file_size_limit_never_raise_it() -> None:
    init, _ = parse({"trusted": False}, ServerConfig(max_file_size=16 << 20))
    raised, warnings = parse({"memoryLens": {"maxFileSize": 10**12}}, init)
    assert raised.max_file_size == 16 << 20 and len(warnings) == 1 and "may only lower it" in warnings[0]
    lowered, warnings = parse({"memoryLens": {"maxFileSize": 100}}, init)
    assert lowered.max_file_size == 100 and warnings == []
    assert parse({"memoryLens": {"maxFileSize": 10**12}}, ServerConfig(max_file_size=16 << 20))[0].max_file_size == 10**12
    assert to_settings(lowered, Settings()).max_file_bytes == 100 and not to_settings(lowered, Settings()).trusted


def test_save_preview_is_a_boolean_under_save() -> None:
    cfg, warnings = parse({"memoryLens": {"save": {"preview": True}}})
    assert cfg.save_preview is True and warnings == []
    assert parse({"save": {"preview": False}}, cfg)[0].save_preview is False
    assert parse({"save": {}}, cfg)[0].save_preview is True  # missing: the earlier value stays
    for bad in ({"save": {"preview": "yes"}}, {"save": True}):
        cfg, warnings = parse(bad)
        assert cfg.save_preview is False and len(warnings) == 1 and "memoryLens.save" in warnings[0]
