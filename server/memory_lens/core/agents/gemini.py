"""What Gemini CLI loads: the memory chain of `core/merge.py` (imports, trimming, settings),
seen as an agent view. Nothing is re-derived here: the view wraps the `Memory` it is given."""

from __future__ import annotations

from memory_lens.core.agents.common import AgentSource, AgentView
from memory_lens.core.merge import Memory

AGENT = "gemini"


def view_of(memory: Memory) -> AgentView:
    """MEMORY as an agent view; `view.memory` keeps it whole for the front ends' Gemini output."""
    sources = tuple(AgentSource(s.path, s.scope.value, s.bytes, s.readable and bool(s.content),
                                reason=s.reason if not s.readable else ("" if s.content else "empty"))
                    for s in memory.sources)
    return AgentView(AGENT, memory.target_dir, memory.project_root, sources, memory.text,
                     tuple(memory.warnings), memory.trace, memory=memory)
