"""Copilot CLI's view (`core/agents/copilot.py`): the rules verified against Copilot CLI 1.0.102
(the real-agent suite compares the text byte for byte), and the statuses of the scoped files
for the file asked about, which the binary leaves to its model."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lens.core.agents import agent_view, copilot
from memory_lens.core.agents.scoped import GlobError
from memory_lens.core.settings import resolve_settings


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    return {"COPILOT_HOME": str(tmp_path / "home" / ".copilot")}


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def repo(tmp_path: Path, name: str = "app") -> Path:
    root = tmp_path / name
    write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    (root / ".git" / "objects").mkdir()
    (root / ".git" / "refs").mkdir()
    return root


def view(start: Path, env: dict[str, str], file: Path | None = None):
    return agent_view("copilot", start, resolve_settings(), environ=env, file=file)


def by_name(v) -> dict[str, object]:
    return {s.path.name: s for s in v.sources}


def test_tagged_order_root_cwd_then_between_nearest_first(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(tmp_path / "home/.copilot/copilot-instructions.md", "home")
    write(root / ".github/copilot-instructions.md", "repo")
    write(root / "AGENTS.md", "root")
    write(root / "a/AGENTS.md", "a")
    write(root / "a/b/GEMINI.md", "b")
    write(root / "a/b/c/CLAUDE.md", "c")
    write(root / "a/b/c/below/AGENTS.md", "below")
    v = view(root / "a/b/c", env)
    blocks = [b.split("\n")[1] for b in v.text.split("\n\n")]
    assert blocks == ["home", "repo", "root", "c", "b", "a"]
    assert v.project_root == root
    assert [s.tier for s in v.sources] == ["user", "repository", "repository", "working-directory",
                                           "inherited", "inherited"]


def test_block_format_bom_off_nothing_else(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "\ufeff  x\r\n\r\n")
    write(root / "CLAUDE.md", "")
    assert view(root, env).text == ("<custom_instruction>\n  x\r\n\r\n\n</custom_instruction>\n\n"
                                    "<custom_instruction>\n\n</custom_instruction>")


@pytest.mark.parametrize("git", [{}, {"HEAD": "ref: x\n"}])
def test_a_git_directory_git_does_not_accept_is_no_root(tmp_path: Path, env: dict[str, str], git: dict) -> None:
    (tmp_path / "app/.git").mkdir(parents=True)
    for name, text in git.items():
        write(tmp_path / "app/.git" / name, text)
    write(tmp_path / "app/AGENTS.md", "root")
    write(tmp_path / "app/sub/AGENTS.md", "sub")
    v = view(tmp_path / "app/sub", env)
    assert v.project_root is None
    assert v.text == "<custom_instruction>\nsub\n</custom_instruction>"


def test_a_git_file_is_a_root(tmp_path: Path, env: dict[str, str]) -> None:
    write(tmp_path / "wt/.git", "gitdir: /nonexistent\n")
    write(tmp_path / "wt/AGENTS.md", "root")
    (tmp_path / "wt/sub").mkdir()
    assert view(tmp_path / "wt/sub", env).project_root == tmp_path / "wt"


def test_names_without_regard_to_case_and_the_names_not_read(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / "agents.md", "lower")
    for name in (".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.override.md", ".github/AGENTS.md"):
        write(root / name, "no")
    assert view(root, env).text == "<custom_instruction>\nlower\n</custom_instruction>"


@pytest.mark.parametrize("value", ["'**'", "'*'", "'**/*'", "''", "['**']", "5", "**"])
def test_apply_to_that_means_always_attaches_the_file_whole(tmp_path: Path, env: dict[str, str], value: str) -> None:
    root = repo(tmp_path)
    text = f"---\napplyTo: {value}\n---\nbody\n"
    write(root / ".github/instructions/a.instructions.md", text)
    v = view(root, env)
    assert v.text == text
    assert v.sources[0].loaded and v.sources[0].when == "start"


def test_scoped_files_are_named_in_the_table(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / ".github/instructions/ts.instructions.md", "---\napplyTo: 'src/**/*.ts'\ndescription: 'a | b'\n---\nts")
    write(root / ".github/instructions/py.instructions.md", "---\napplyTo:\n  - '*.py'\n  - '*.pyi'\n---\npy")
    write(root / ".claude/rules/r.md", "---\npaths: [unclosed\n---\nr")
    assert view(root, env).text == copilot.INSTRUCTIONS_HEAD + (
        "\n| *.py, *.pyi | '.github/instructions/py.instructions.md' |  |"
        "\n| src/**/*.ts | '.github/instructions/ts.instructions.md' | a \\| b |"
        "\n| [unclosed | '.claude/rules/r.md' |  |")


def test_tagged_and_the_rest_end_with_one_newline_more(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "a")
    write(root / ".github/instructions/u.instructions.md", "u")
    assert view(root, env).text == "<custom_instruction>\na\n</custom_instruction>\n\nu\n"


def test_exclude_agent_coding_agent_leaves_the_file_out(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / ".github/instructions/a.instructions.md", "---\nexcludeAgent: ['coding-agent']\n---\na")
    write(root / ".github/instructions/b.instructions.md", "---\nexcludeAgent: code-review\n---\nb")
    assert view(root, env).text == "---\nexcludeAgent: code-review\n---\nb"


def test_requestable_status_for_the_file_asked_about(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / ".github/instructions/ts.instructions.md", "---\napplyTo: 'src/**/*.ts, *.tsx'\n---\nts")
    write(root / ".claude/rules/py.md", "---\npaths: '*.py'\n---\npy")
    ts = write(root / "src/a/x.ts", "")
    start = view(root, env)
    assert all(s.when == "requestable" and not s.loaded and "may open" in s.reason for s in start.sources)
    read = by_name(view(root, env, file=ts))
    assert read["ts.instructions.md"].matched_by == "src/**/*.ts" and not read["ts.instructions.md"].reason
    assert read["py.md"].reason == f"paths `*.py` does not match {ts}"
    assert view(root, env, file=ts).text == start.text


@pytest.mark.parametrize("pattern, rel, hit", [
    ("src/**/*.ts", "src/x.ts", "src/**/*.ts"), ("src/**/*.ts", "src/a/b/x.ts", "src/**/*.ts"),
    ("src/**/*.ts", "lib/src/x.ts", None), ("*.py", "a/b/x.py", "*.py"), ("/x.py", "a/x.py", None),
    ("/x.py", "x.py", "/x.py"), ("{src,lib}/*.ts", "lib/x.ts", "{src,lib}/*.ts"), ("a, b/*.md", "b/c.md", "b/*.md"),
    ("docs/", "docs/a/b.md", "docs/"), ("[ab].md", "b.md", "[ab].md"), ("[!ab].md", "b.md", None),
    ("x?.md", "x1.md", "x?.md"),
])
def test_pattern_match(pattern: str, rel: str, hit: str | None) -> None:
    assert copilot.pattern_match(pattern, rel) == hit


def test_exploding_braces_match_nothing_in_bounded_time() -> None:
    with pytest.raises(GlobError, match="expands to 1,048,576 patterns"):
        copilot.compile_glob("{a,b}" * 20)  # counted, never expanded
    assert copilot.pattern_match("{a,b}" * 20, "ab" * 10) is None


@pytest.mark.parametrize("pattern, rel, hit", [
    ("[!].md", "!.md", "[!].md"), ("[z-a].md, *.md", "a.md", "*.md"), ("src/**/*.{ts,tsx}", "src/a/b.tsx",
                                                                          "src/**/*.{ts,tsx}"),
])
def test_classes_no_regular_expression_takes_match_nothing_and_crash_nothing(pattern: str, rel: str,
                                                                             hit: str | None) -> None:
    assert copilot.pattern_match(pattern, rel) == hit


def rule_of(tmp_path: Path, text: str):
    return copilot.scoped_rule(tmp_path / ".github" / "instructions" / "x.instructions.md", text)


@pytest.mark.parametrize("text, problem", [
    ("---\napplyTo: src/**\nno end\n", "the front matter opened by --- on line 1 is never closed"),
    ("---\napplyTo: [src/**\n---\nx\n", "applyTo [src/** opens a list it never closes"),
    ("---\napplyTo: 'src/**\n---\nx\n", "applyTo 'src/** opens a quote it never closes"),
    ("---\napplyTo: 5\n---\nx\n", "applyTo is 5, not a string or list: Copilot CLI attaches this file at start"),
])
def test_front_matter_copilot_cannot_read_as_meant_is_one_problem(tmp_path: Path, text: str, problem: str) -> None:
    rule, found = rule_of(tmp_path, text)
    assert rule is None and found.startswith(problem)


def test_an_instructions_file_as_a_scoped_rule(tmp_path: Path) -> None:
    for always in ("---\napplyTo: '**'\n---\nx", "no front matter", "---\napplyTo: '*.ts'\nexcludeAgent: "
                   "coding-agent\n---\nx"):
        assert rule_of(tmp_path, always) == (None, "")
    rule, problem = rule_of(tmp_path, "\ufeff---\ndescription: d\napplyTo: 'src/**/*.ts, {a,b}{c,d}, [z-a]'\n---\nx")
    assert problem == "" and rule is not None
    assert (rule.agent, rule.key, rule.line, rule.base) == ("copilot", "applyTo", 3, tmp_path)
    assert [g for g, _ in rule.matchers] == ["src/**/*.ts", "{a,b}{c,d}"]
    assert [g for g, _ in rule.problems] == ["[z-a]"]


def test_home_instructions_sorted_and_custom_dirs(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    home = Path(env["COPILOT_HOME"])
    for name in ("z", "m/x", "a", "B"):
        write(home / "instructions" / f"{name}.instructions.md", name)
    write(home / "instructions/c.md", "not read")
    write(tmp_path / "e1/AGENTS.md", "e1")
    write(tmp_path / "e1/sub/b.instructions.md", "b")
    write(tmp_path / "e1/.hidden/c.instructions.md", "not read")
    env = {**env, copilot.ENV_DIRS: f" {tmp_path / 'e1'} ,{tmp_path / 'none'}"}
    v = view(root, env, file=tmp_path / "e1/sub/x.md")
    assert v.text == "B\n\na\n\nm/x\n\nz\n\nb\n\n" + copilot.NESTED_HEAD + \
        "\n| ../e1/ | '../e1/AGENTS.md' | Agent instructions for ../e1/**/* |"
    assert by_name(v)["AGENTS.md"].matched_by == "../e1/**/*"


def test_an_unreadable_file_is_a_warning_not_a_failure(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    (root / "AGENTS.md").mkdir()  # a directory named like a memory file: not a file, skipped
    write(root / "GEMINI.md", b"\xff\xfebad\x00")
    v = view(root, env)
    assert v.text == "<custom_instruction>\n\ufffd\ufffdbad\x00\n</custom_instruction>"
    assert v.warnings == ()


def test_a_tagged_file_with_the_same_text_loads_once(tmp_path: Path, env: dict[str, str]) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "same")
    write(root / "GEMINI.md", "\ufeffsame")
    write(root / "CLAUDE.md", "same\n")
    write(root / ".github/instructions/a.instructions.md", "same")
    write(root / ".github/instructions/b.instructions.md", "same")
    v = view(root, env)
    assert v.text == ("<custom_instruction>\nsame\n</custom_instruction>\n\n"
                      "<custom_instruction>\nsame\n\n</custom_instruction>\n\nsame\n\nsame\n")
    gemini = by_name(v)["GEMINI.md"]
    assert not gemini.loaded and gemini.reason.startswith(f"the same text as {root / 'AGENTS.md'}")
