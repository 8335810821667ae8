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
    tables = dict(unicode_marks.TABLES)
    tables[unicodedata.unidata_version] = unicode_marks.encode(unicode_marks.read_ranges())
    lines = []
    for version in sorted(tables, key=lambda v: tuple(int(p) for p in v.split("."))):
        lines.append(f'    "{version}": (')
        for chunk in textwrap.wrap(tables[version], 92, break_on_hyphens=False):
            lines.append(f'        "{chunk} "')
        lines[-1] = lines[-1][:-2] + '"'
        lines.append("    ),")
    text = MODULE.read_text(encoding="utf-8")
    block = "TABLES: dict[str, str] = {\n" + "\n".join(lines) + "\n}\n"
    text = re.sub(r"TABLES: dict\[str, str\] = \{\n.*?^\}\n", lambda _: block, text, count=1, flags=re.S | re.M)
    MODULE.write_text(text, encoding="utf-8")
    print(f"Unicode {unicodedata.unidata_version}: {len(unicode_marks.read_ranges())} ranges written to {MODULE}")


if __name__ == "__main__":
    main()
