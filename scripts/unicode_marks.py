"""Write the combining-mark ranges of this Python's Unicode version into
server/memory_lens/core/notes/unicode_marks.py (run it once under each supported Python).

    python scripts/unicode_marks.py
"""

from __future__ import annotations

import re
import sys
import textwrap
import unicodedata
from pathlib import Path

MODULE = Path(__file__).resolve().parent.parent / "server" / "memory_lens" / "core" / "notes" / "unicode_marks.py"
sys.path.insert(0, str(MODULE.parents[3]))

from memory_lens.core.notes import unicode_marks  # noqa: E402


def main() -> None:
    version = unicodedata.unidata_version
    full = unicode_marks.versions()
    full[version] = unicode_marks.read_ranges()
    lines, before = [], []
    for v in sorted(full, key=lambda v: tuple(int(p) for p in v.split("."))):
        changes = unicode_marks.encode(before, full[v])
        chunks = textwrap.wrap(changes, 92, break_on_hyphens=False) or [""]
        lines.append(f'    "{v}": (')
        lines += [f'        "{chunk} "' for chunk in chunks]
        lines[-1] = lines[-1][:-2] + '"'
        lines.append("    ),")
        before = full[v]
    text = _replace(MODULE.read_text(encoding="utf-8"), "TABLES", lines)
    MODULE.write_text(text, encoding="utf-8")
    print(f"Unicode {version}: {len(full[version])} ranges written to {MODULE}")


def _replace(text: str, name: str, lines: list[str]) -> str:
    """TEXT with the dict literal assigned to NAME holding LINES."""
    block = f"{name}: dict[str, str] = {{\n" + "".join(line + "\n" for line in lines) + "}\n"
    pattern = re.compile(rf"^{name}: dict\[str, str\] = \{{\n.*?^\}}\n", re.S | re.M)
    if not pattern.search(text):
        raise SystemExit(f"{MODULE}: no {name} table found")
    return pattern.sub(lambda _: block, text, count=1)


if __name__ == "__main__":
    main()
