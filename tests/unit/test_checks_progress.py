"""`check_targets` tells a progress listener of each tree walk and of every file checked, and
`memory-lens check` draws its progress bar from it."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

from memory_lens.core.agents.budget import check_targets
from memory_lens.core.settings import Settings
from memory_lens.terminal_progress import ERASE, TerminalProgress


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def scanning(self, directory: Path) -> None:
        self.events.append(("scanning", directory))

    def checked(self, done: int, total: int) -> None:
        self.events.append(("checked", done, total))


def test_a_tree_check_reports_the_walk_then_every_file(tmp_path: Path) -> None:
    base = Path(os.path.realpath(tmp_path))
    (base / "g").mkdir()
    (base / "g" / "GEMINI.md").write_text("- shared\n")
    project = base / "p"
    (project / ".git").mkdir(parents=True)
    (project / "GEMINI.md").write_text("- root\n")
    for i in range(5):
        (project / f"d{i}").mkdir()
        (project / f"d{i}" / "GEMINI.md").write_text(f"- rule {i}\n- rule {i}\n")
    recorder = Recorder()
    report = check_targets([project], Settings(global_dir=base / "g"), progress=recorder)
    assert len(report.files) == 7
    assert recorder.events == [("scanning", project), *[("checked", n, 7) for n in range(1, 8)]]
    assert [f.code for f in report.findings] == ["duplicate"] * 5

    single = Recorder()  # one file: no walk, nothing to report
    check_targets([project / "d0" / "GEMINI.md"], Settings(global_dir=base / "g"), progress=single)
    assert single.events == []


def test_the_bar_is_erased_before_a_warning_and_stops_watching_the_log_when_closed() -> None:
    stream = io.StringIO()
    bar = TerminalProgress(stream)
    bar.checked(1, 4)
    assert stream.getvalue() == f"{ERASE}[{'#' * 6}{'-' * 18}] checked 1 of 4 memory files"
    logging.getLogger("memory_lens.scan").warning("skipped part of the workspace that cannot be read: x")
    assert stream.getvalue().endswith(f"memory files{ERASE}")  # the warning starts on an empty line
    bar.checked(4, 4)
    bar.close()
    assert stream.getvalue().endswith(f"checked 4 of 4 memory files{ERASE}")
    drawn = stream.getvalue()
    logging.getLogger("memory_lens.scan").warning("after the check")
    assert stream.getvalue() == drawn
    assert all(not any(isinstance(f, type(bar._filter)) for f in h.filters)  # noqa: SLF001
               for h in (logging.lastResort, *logging.getLogger().handlers) if h is not None)
