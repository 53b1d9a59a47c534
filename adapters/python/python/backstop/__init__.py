"""backstop: MCP tool servers that behave well for LLM agents.

Failures become ``isError`` results the model can read; oversized output is cut from
the head under a hard byte cap, keeping its tail. The decisions are made by
backstop-core (Rust), exposed as plain-data functions in :mod:`backstop._core`.

For fastmcp servers, one line::

    from backstop.fastmcp import Backstop
    mcp.add_middleware(Backstop())

Without fastmcp, the limiter alone::

    >>> from backstop import Limit
    >>> limit = Limit(1_000)
    >>> cut, report = limit.limit("capture_pane", {"content": [{"type": "text", "text": "x\\n" * 5000 + "$ "}]})
    >>> cut["content"][0]["text"].endswith("x\\n$ ")
    True
    >>> report["original_bytes"]
    10002
"""

from ._core import DEFAULT_MAX_BYTES, MIN_BYTES, Limit, classify, validation_text

__all__ = ["DEFAULT_MAX_BYTES", "MIN_BYTES", "Limit", "classify", "validation_text"]
__version__ = "0.1.0"
