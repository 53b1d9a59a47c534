"""The Python README's examples run as written (adapters/python/README.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{n}" for n in range(len(BLOCKS))])
def test_readme_block_runs(block: str) -> None:
    namespace: dict = {}
    from fastmcp import FastMCP

    namespace["mcp"] = FastMCP("readme")  # the blocks that add middleware need a server
    exec(compile(block, str(README), "exec"), namespace)
    if "cut" in namespace:
        cut, report = namespace["cut"]
        assert cut["content"][0]["text"].endswith("x\n$ ")
        assert report["original_bytes"] == 10_002
