"""Type stubs of the native module: backstop-core's decisions as plain-data functions."""

from typing import Any

MIN_BYTES: int
"""The smallest cap that can hold every truncated result (L14)."""
DEFAULT_MAX_BYTES: int
"""The default cap: 1,000,000 bytes of wire size (L2)."""

class Limit:
    """A response limit: a cap in wire bytes, the tools it applies to, line alignment."""

    def __init__(
        self,
        max_bytes: int = 1_000_000,
        tools: list[str] | None = None,
        line_align: bool = True,
        keep: str | dict[str, str] | None = None,
    ) -> None: ...
    def keep_of(self, tool: str) -> str:
        """The keep policy for ``tool``'s results (L16): tail, head or head+tail:SHARE."""
    @property
    def max_bytes(self) -> int: ...
    @property
    def line_align(self) -> bool: ...
    def applies_to(self, tool: str) -> bool: ...
    def limit(
        self, tool: str, result: dict[str, Any], output_schema: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The cut result and its report, or None to send ``result`` as it is."""
    def limit_json(
        self, tool: str, result: bytes, output_schema: dict[str, Any] | None = None
    ) -> bytes | None:
        """The cut result's compact JSON, or None to send ``result`` as it is."""

def classify(failure: dict[str, Any]) -> dict[str, Any]:
    """How the core reads a failure: error_type, expected, family, level, message, suggestion."""

def validation_text(tool: str, errors: list[dict[str, Any]]) -> str:
    """The V2 text of pydantic's structured errors, with no input value in it (V3)."""

def tool_error(failure: dict[str, Any], call: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The isError result of a failed tool call and its log record."""

def request_error(
    failure: dict[str, Any],
    method: str,
    revision: str | None = None,
    uri: str | None = None,
    *,
    session: dict[str, Any] | None = None,
    counts: ErrorCounts | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON-RPC error of a failed request that is not a tool call, and its log record
    (counted in ``counts``); the revision is ``revision``, or what ``session`` says."""

class ToolCatalog:
    """The tools a server has, as ``tools/list`` said: what E8 and L15 decide with."""

    def __init__(self) -> None: ...
    def learn(self, tools: list[dict[str, Any]]) -> None:
        """Add the tools of one listing: MCP ``Tool`` dicts (name, inputSchema, outputSchema)."""
    def replace(self, tools: list[dict[str, Any]]) -> None:
        """Forget what was known, and know the tools of this full listing."""
    def names(self) -> list[str]: ...
    def __contains__(self, name: str) -> bool: ...
    def __len__(self) -> int: ...

class ErrorCounts:
    """Converted failures per ``<error_type>:<method>`` (G3), the number of keys bounded."""

    def __init__(self, max_keys: int = 1024) -> None: ...
    def as_dict(self) -> dict[str, int]: ...
    def get(self, key: str) -> int: ...
    @property
    def overflow(self) -> int: ...

def shape_tool_call(
    catalog: ToolCatalog,
    call: dict[str, Any],
    limit: Limit,
    *,
    failure: dict[str, Any] | None = None,
    result: dict[str, Any] | None = None,
    counts: ErrorCounts | None = None,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]:
    """One tools/call decided by the core: ``(result, error, record, truncation)`` — the
    result to send (None: the tool's own, unchanged) or the protocol error (E8), the log
    record of a converted failure, the report of a cut."""

def unknown_tool_error(name: str, known: list[str]) -> dict[str, Any]:
    """The protocol error of a call of a tool that does not exist (E8)."""
