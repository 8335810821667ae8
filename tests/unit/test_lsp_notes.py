"""memory_lens.lsp.notes: note document URIs name any note of either scope, and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcInvalidParams

from memory_lens.core.discovery import Scope
from memory_lens.lsp.notes import document_uri, parse_document_uri

NAMES = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=128)
ROOTS = st.sampled_from([Path("/home/me/app"), Path("/tmp/a b/c?d"), Path("/srv/日本/x&y=z"), Path("/p/%2F")])


@settings(max_examples=300, deadline=None)
@given(NAMES, ROOTS, st.sampled_from([Scope.PROJECT, Scope.GLOBAL]))
def test_document_uris_round_trip(name: str, root: Path, scope: Scope) -> None:
    uri = document_uri(scope, name, root)
    assert uri.startswith(f"memory-lens-note:/{scope.value}/") and ".md" in uri
    assert " " not in uri and "#" not in uri
    assert parse_document_uri(uri) == (scope, name, root if scope is Scope.PROJECT else None)


@pytest.mark.parametrize("uri", [
    "file:///home/me/app/x.md", "memory-lens-note:/team/x.md", "memory-lens-note:/project/x.md",
    "memory-lens-note:/project/x.txt?root=%2Fa", "memory-lens-note:/global/a/b.md", "untitled:x", 5,
])
def test_other_uris_are_refused(uri: object) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        parse_document_uri(uri)  # type: ignore[arg-type]
