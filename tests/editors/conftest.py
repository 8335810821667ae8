"""Shared helpers for real-editor tests: find the editor, or fail on CI where it must exist."""

from __future__ import annotations

import os
import shutil

import pytest


def _require(name: str, install_hint: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} is not installed ({install_hint})"
    if os.environ.get("CI"):
        pytest.fail(message + "; .ci/run installs it, so CI must have it")
    pytest.skip(message)


@pytest.fixture
def require_program():
    """Return the path of a program; skip locally when it is missing, fail on CI (CI installs it)."""
    return _require
