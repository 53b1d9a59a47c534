"""Shared fixtures of backstop's Python tests (SPEC A4): a fastmcp in-memory client
against the probe server, with or without backstop."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
