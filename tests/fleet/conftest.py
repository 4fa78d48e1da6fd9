"""The fleet tests' shared root of real drives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fleet_support import jane_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """alice (Jane twice), team/bob (Jane once, and 'jane ... roe' apart), carol (none),
    a gitolite-style admin repository (no branch main) and a checkout (test_store and
    test_schedule make roots of their own)."""
    return jane_root(tmp_path)
