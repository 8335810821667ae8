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
    table = unicode_marks.encode(unicode_marks.read_ranges())
    tables = {v: t for v, t in unicode_marks.TABLES.items() if v != version}
    same_as = {v: o for v, o in unicode_marks.SAME_AS.items() if v != version and o != version}
    same = next((v for v, t in tables.items() if t == table), None)
    if same is None:
        tables[version] = table
    else:  # written once, under the version that has it already
        same_as[version] = same
    order = lambda v: tuple(int(p) for p in v.split("."))  # noqa: E731
    lines = []
    for v in sorted(tables, key=order):
        lines.append(f'    "{v}": (')
        for chunk in textwrap.wrap(tables[v], 92, break_on_hyphens=False):
            lines.append(f'        "{chunk} "')
        lines[-1] = lines[-1][:-2] + '"'
        lines.append("    ),")
    text = MODULE.read_text(encoding="utf-8")
    text = _replace(text, "TABLES", lines)
    text = _replace(text, "SAME_AS", [f'    "{v}": "{o}",' for v, o in sorted(same_as.items(), key=lambda i: order(i[0]))])
    MODULE.write_text(text, encoding="utf-8")
    where = f"the same as {same}'s" if same else "written"
    print(f"Unicode {version}: {len(unicode_marks.read_ranges())} ranges, {where}, in {MODULE}")


def _replace(text: str, name: str, lines: list[str]) -> str:
    """TEXT with the dict literal assigned to NAME holding LINES."""
    block = f"{name}: dict[str, str] = {{\n" + "".join(line + "\n" for line in lines) + "}\n"
    pattern = re.compile(rf"^{name}: dict\[str, str\] = \{{\n.*?^\}}\n", re.S | re.M)
    if not pattern.search(text):
        raise SystemExit(f"{MODULE}: no {name} table found")
    return pattern.sub(lambda _: block, text, count=1)


if __name__ == "__main__":
    main()
