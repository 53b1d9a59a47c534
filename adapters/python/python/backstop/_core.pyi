"""Type stubs of the native module: backstop-core's decisions as plain-data functions."""

from typing import Any, TypeAlias

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
        max_chars: int | str | None = None,
        max_tokens: int | str | None = None,
    ) -> None: ...
    def keep_of(self, tool: str) -> str:
        """The keep policy for ``tool``'s results (L16): tail, head or head+tail:SHARE."""
    @property
    def max_bytes(self) -> int: ...
    @property
    def max_chars(self) -> int | None: ...
    @property
    def max_tokens(self) -> int | None: ...
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

class ErrorCounts:
    """Converted failures per ``<error_type>:<method>`` (G3), the number of keys bounded."""

    def __init__(self, max_keys: int = 1024) -> None: ...
    def as_dict(self) -> dict[str, int]: ...
    def get(self, key: str) -> int: ...
    @property
    def overflow(self) -> int: ...

#: A machine's answer to a tools/call: ``(result, error, truncation)`` — all None to send
#: the tool's own result as it is, else the result to send instead (and the report of
#: its cut) or the protocol error to answer with (E8).
Answer: TypeAlias = tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]

class SessionMachine:
    """The core's session machine, in process (SPEC A0): every decision about a
    server's tool calls, for every session of it. Requests are named by ints."""

    def __init__(self, limit: Limit, strict: bool = False) -> None: ...
    @property
    def strict(self) -> bool:
        """Whether V6's strict mode is on."""
    def set_server_stamp(self, stamp: dict[str, Any] | None) -> None:
        """The identity the SDK stamps into results of 2026-07-28 (R4), counted (L4)."""
    def client_request(
        self,
        id: int,
        method: str,
        *,
        tool: str | None = None,
        arguments: dict[str, Any] | list[str] | None = None,
        task_id: str | None = None,
        meta: dict[str, Any] | None = None,
        handshake: dict[str, Any] | None = None,
        may_send: bool = True,
    ) -> dict[str, Any] | None:
        """A client's request (a tools/call's ``arguments`` as sent, of which only the
        shapes are kept: V2, V3); the ``{"method", "params"}`` of backstop's own request
        to make first (list the tools: E8, R5), or None."""
    def own_listing_answer(self, page: dict[str, Any] | None) -> dict[str, Any] | None:
        """A page of backstop's own listing (None: it failed); the next page's request."""
    def before_running(self, id: int) -> Answer | None:
        """The answer that makes running tools/call ``id`` needless (E8, V6), or None."""
    def server_response(self, id: int, result: Any) -> Answer:
        """The server's result of request ``id`` (a tools/list page teaches the catalog)."""
    def server_failure(self, id: int, failure: dict[str, Any]) -> Answer:
        """The tool of tools/call ``id`` raised: the facts of its exception."""
    def server_result(self, id: int, result: dict[str, Any]) -> Answer:
        """The tool of tools/call ``id`` returned ``result`` (its texts read in place)."""
    def server_notification(self, method: str) -> None: ...
    def knows_tool(self, name: str) -> bool: ...
    def forget(self, id: int) -> bool:
        """Forget request ``id`` (it ended another way); whether it was pending."""
    def take_log_records(self) -> list[dict[str, Any]]:
        """The records of the failures converted since the last call (G1, G2)."""
    def error_counts(self) -> dict[str, int]:
        """Converted tools/call failures per ``<error_type>:<method>`` (G3)."""
    def __len__(self) -> int: ...

def unknown_tool_error(name: str, known: list[str]) -> dict[str, Any]:
    """The protocol error of a call of a tool that does not exist (E8)."""
