"""backstop for fastmcp servers: one middleware, ``mcp.add_middleware(Backstop())``.

:class:`Backstop` does both of backstop's jobs in the right order by construction: a
failed tool call becomes an ``isError`` result the model can read (SPEC E1–E9, V1–V6),
and an oversized result — that one included — is cut from the head under a hard byte
cap (L1–L15; O1–O3). Errors of other requests become JSON-RPC errors mapped by family
(P1, P2). Failures are logged through :mod:`logging` (logger ``backstop``) at their own
level, and counted (G1–G3).

It hooks fastmcp only through the public :class:`fastmcp.server.middleware.Middleware`
API (``on_call_tool``, ``on_list_tools``, ``on_request``) and never overrides a private
method, so it works on every fastmcp 4.x release (A4).

Add it *first* (fastmcp runs the first-added middleware outermost): layers added after
it — audit, access control, retry — still see a failure as a failure (O1).

For a drop-in replacement of libtmux-mcp's pair, :class:`ToolErrorResultMiddleware`
(``transform_errors``) and :class:`TailPreservingResponseLimitingMiddleware`
(``max_size``, ``tools``) take the same constructor arguments.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import mcp_types
import pydantic_core
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult

from . import _core
from ._facts import describe

try:  # the MCP SDK's protocol error, as fastmcp re-exports it
    from fastmcp.exceptions import McpError as _ProtocolError
except ImportError:  # pragma: no cover - every fastmcp 4.x has it
    from mcp import MCPError as _ProtocolError  # type: ignore[no-redef]

__all__ = [
    "Backstop",
    "ErrorCallback",
    "FastMCPErrorCallback",
    "TailPreservingResponseLimitingMiddleware",
    "ToolErrorResultMiddleware",
]

logger = logging.getLogger("backstop")

#: ``on_error(record, exception)``: sees each converted failure's log record (G3).
ErrorCallback = Callable[[dict[str, Any], BaseException], None]

#: ``error_callback(exception, context)``: fastmcp's ``ErrorHandlingMiddleware`` callback,
#: which the reference pair's ``ToolErrorResultMiddleware`` inherits (G3).
FastMCPErrorCallback = Callable[[Exception, MiddlewareContext[Any]], None]

#: What :class:`_Core` calls for each converted failure: its record, exception, context.
_Notify = Callable[[dict[str, Any], BaseException, MiddlewareContext[Any]], None]

#: How many distinct ``<error_type>:<method>`` keys are counted before new ones go to
#: ``error_counts_overflow`` (method names come from clients).
MAX_COUNT_KEYS = 1024

_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}

#: The client-identity and revision keys of a request's ``_meta`` (MCP 2026-07-28; R2, R3).
_CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
_PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"


def _jsonable(value: Any) -> Any:
    """Any value fastmcp would serialize, as JSON data."""
    return pydantic_core.to_jsonable_python(value, fallback=str)


#: The fields of a text block that holds nothing but its text.
_PLAIN_TEXT_FIELDS = frozenset({"type", "text"})


def _result_dict(result: ToolResult) -> dict[str, Any]:
    """A fastmcp ``ToolResult`` with MCP's wire names; text is referenced, not copied."""
    content: list[Any] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            if block.model_fields_set <= _PLAIN_TEXT_FIELDS:  # most blocks: no dump needed
                entry = {"type": "text"}
            else:
                entry = block.model_dump(by_alias=True, exclude_none=True, exclude={"text"}, mode="json")
            entry["text"] = block.text
            content.append(entry)
        else:
            content.append(block.model_dump(by_alias=True, exclude_none=True, mode="json"))
    out: dict[str, Any] = {"content": content, "isError": bool(result.is_error)}
    if result.structured_content is not None:
        out["structuredContent"] = _jsonable(result.structured_content)
    if result.meta:
        out["_meta"] = _jsonable(result.meta)
    return out


_CONTENT_ADAPTER: Any = None


def _content_block(entry: dict[str, Any]) -> Any:
    global _CONTENT_ADAPTER
    if entry.get("type") == "text" and isinstance(entry.get("text"), str):
        return mcp_types.TextContent.model_validate(entry)
    if _CONTENT_ADAPTER is None:
        from pydantic import TypeAdapter

        _CONTENT_ADAPTER = TypeAdapter(mcp_types.ContentBlock)
    return _CONTENT_ADAPTER.validate_python(entry)


def _tool_result(data: dict[str, Any]) -> ToolResult:
    """A result dict from the core as a fastmcp ``ToolResult``."""
    return ToolResult(
        content=[_content_block(entry) for entry in data.get("content", [])],
        structured_content=data.get("structuredContent"),
        meta=data.get("_meta"),
        is_error=bool(data.get("isError", False)),
    )


def _request_meta(message: Any) -> dict[str, Any]:
    meta = getattr(message, "meta", None)
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return meta
    try:
        dumped = meta.model_dump(by_alias=True)
    except Exception:
        return {}
    return dumped if isinstance(dumped, dict) else {}


def _client_params(context: MiddlewareContext[Any]) -> Any:
    """The session's ``initialize`` parameters, or None (no session: an in-process call)."""
    ctx = context.fastmcp_context
    if ctx is None:
        return None
    try:
        return ctx.session.client_params
    except Exception:
        return None


def _client(context: MiddlewareContext[Any]) -> dict[str, str] | None:
    """The client's name and version (R2): the handshake's, else the request's ``_meta``."""
    params = _client_params(context)
    # The SDK's field name first: a missing attribute of a pydantic model costs an exception.
    info = getattr(params, "client_info", None) or getattr(params, "clientInfo", None)
    if info is not None and getattr(info, "name", None):
        return {"name": str(info.name), "version": str(getattr(info, "version", ""))}
    info = _request_meta(context.message).get(_CLIENT_INFO_META)
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        return {"name": info["name"], "version": str(info.get("version", ""))}
    return None


def _revision(context: MiddlewareContext[Any]) -> str | None:
    """The session's protocol revision (R3): the handshake's, else the request's ``_meta``."""
    params = _client_params(context)
    version = getattr(params, "protocol_version", None) or getattr(params, "protocolVersion", None)
    if isinstance(version, str):
        return version
    version = _request_meta(context.message).get(_PROTOCOL_VERSION_META)
    return version if isinstance(version, str) else None


#: The ``_meta`` key MCP 2026-07-28 servers stamp their identity under.
_SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"

#: The first revision whose results carry ``resultType`` and the identity stamp.
_STATELESS_REVISION = "2026-07-28"

#: The server properties the SDK's identity stamp is made of, as ``Implementation`` names them.
_IDENTITY_FIELDS = ("name", "version", "title", "description", "website_url", "icons")


def _server_info(context: MiddlewareContext[Any]) -> dict[str, Any] | None:
    """The server's identity as the SDK stamps it, from fastmcp's public properties."""
    server = getattr(context.fastmcp_context, "fastmcp", None)
    if server is None:
        return None
    fields = tuple(getattr(server, attr, None) for attr in _IDENTITY_FIELDS)
    if fields[-1]:  # icons: a list of models, not hashable, so not cached
        stamp = _identity_stamp(fields)
    else:
        try:
            stamp = _cached_identity_stamp(fields[:-1])
        except TypeError:  # a property that cannot be a cache key
            stamp = _identity_stamp(fields)
    return dict(stamp) if stamp is not None else None


def _identity_stamp(fields: tuple[Any, ...]) -> dict[str, Any] | None:
    """The ``Implementation`` of these property values as JSON data (None: not valid)."""
    try:
        info = mcp_types.Implementation(
            **{k: v for k, v in zip(_IDENTITY_FIELDS, fields) if v not in (None, [], "")}
        )
    except Exception:
        return None
    return info.model_dump(by_alias=True, mode="json", exclude_none=True)


@functools.lru_cache(maxsize=16)
def _cached_identity_stamp(fields: tuple[Any, ...]) -> dict[str, Any] | None:
    """:func:`_identity_stamp` of a server without icons, made once per identity (the
    stamp is on every result; the caller copies it)."""
    return _identity_stamp(fields)


#: An upper bound of the bytes of a result's JSON besides its blocks, ``structuredContent``
#: and ``_meta``: braces, member names, ``"isError":false``, ``"resultType":"complete"``.
_RESULT_FRAME_BYTES = 128

#: An upper bound of the bytes of a plain text block besides its text:
#: ``{"type":"text","text":""}`` and a comma.
_TEXT_BLOCK_FRAME_BYTES = 32

#: The most bytes one character of a string takes on the wire: ``\u001b``.
_MAX_CHAR_BYTES = 6

#: The most bytes a number takes on the wire, with its separator (an ``f64`` is at most 24).
_MAX_NUMBER_BYTES = 32


def _spend(value: Any, budget: int) -> int:
    """``budget`` less an upper bound of ``value``'s wire size with its separator;
    negative as soon as it is spent (the rest of ``value`` is then not read), and for
    anything that is not plain JSON data (a model, a date: measured exactly instead)."""
    if isinstance(value, str):
        return budget - (_MAX_CHAR_BYTES * len(value) + 3)
    if value is None or isinstance(value, bool):
        return budget - 6
    if isinstance(value, (int, float)):
        return budget - _MAX_NUMBER_BYTES
    if isinstance(value, dict):
        budget -= 2
        for key, item in value.items():
            if not isinstance(key, str):
                return -1
            budget = _spend(item, _spend(key, budget))
            if budget < 0:
                return budget
        return budget
    if isinstance(value, (list, tuple)):
        budget -= 2
        for item in value:
            budget = _spend(item, budget)
            if budget < 0:
                return budget
        return budget
    return -1


def surely_fits(result: ToolResult, max_bytes: int, stamp: dict[str, Any] | None) -> bool:
    """Whether ``result`` surely fits in ``max_bytes`` of wire size with what the SDK
    adds after the middleware (``resultType``, the identity ``stamp``): an upper bound,
    cheap where the exact size is not — it reads no text, and stops as soon as the cap
    is spent — so that a small result, the common case, is sent as it is (L2) without
    a round trip to the core. False says nothing: then the result is measured exactly.

    The bound: every character at most 6 bytes (``\u001b``), every number 32, and the
    JSON around them at most what :data:`_RESULT_FRAME_BYTES`,
    :data:`_TEXT_BLOCK_FRAME_BYTES` and :func:`_spend` count.
    """
    budget = max_bytes - _RESULT_FRAME_BYTES
    for block in result.content:
        if not isinstance(block, mcp_types.TextContent) or not block.model_fields_set <= _PLAIN_TEXT_FIELDS:
            return False
        budget -= _MAX_CHAR_BYTES * len(block.text) + _TEXT_BLOCK_FRAME_BYTES
        if budget < 0:
            return False
    stamp_meta = {_SERVER_INFO_META: stamp} if stamp is not None else None
    for value in (result.structured_content, result.meta, stamp_meta):
        if value is not None:
            budget = _spend(value, budget)
            if budget < 0:
                return False
    return True


def _wire_additions(context: MiddlewareContext[Any], data: dict[str, Any]) -> bool:
    """Add to ``data`` what the SDK adds to a result after the middleware (L4).

    From MCP 2026-07-28 on, the SDK writes ``resultType`` and stamps the server's
    identity into ``_meta`` unless the result carries one. Both count towards the cap,
    so the limit measures them: ``resultType`` is added for the measurement, the stamp
    is written into ``_meta`` (the SDK then keeps it as it is). Returns whether the
    result already carried a stamp of its own.
    """
    revision = _revision(context)
    if revision is not None and revision < _STATELESS_REVISION:
        return True
    data["resultType"] = "complete"
    meta = data.setdefault("_meta", {})
    if meta.get(_SERVER_INFO_META) is not None:
        return True
    stamp = _server_info(context)
    if stamp is not None:
        meta[_SERVER_INFO_META] = stamp
        return True
    return False


class _Core:
    """What the two halves share: the logging and counting of failures (G1–G3)."""

    def __init__(self, notify: _Notify | None, log: logging.Logger | None) -> None:
        self.notify = notify
        self.logger = log or logger
        self.error_counts: dict[str, int] = {}
        self.error_counts_overflow = 0

    def record(
        self,
        record: dict[str, Any],
        exc: BaseException,
        context: MiddlewareContext[Any],
        log_level: int | None = None,
    ) -> None:
        """Count, log and report one converted failure (G1–G3): logged at ``log_level``,
        the failure's own level as a number (any, CRITICAL or a custom one included),
        else at the level the core chose."""
        key = record["count_key"]
        if key in self.error_counts or len(self.error_counts) < MAX_COUNT_KEYS:
            self.error_counts[key] = self.error_counts.get(key, 0) + 1
        else:
            self.error_counts_overflow += 1
        level = log_level if log_level is not None else _LEVELS.get(record["level"], logging.ERROR)
        self.logger.log(
            level,
            "%s failed: %s: %s",
            record["tool"] or record["method"],
            record["error_type"],
            record["message"],
            extra={
                "backstop_method": record["method"],
                "backstop_tool": record["tool"],
                "backstop_error_type": record["error_type"],
                "backstop_expected": record["expected"],
            },
        )
        if self.notify is not None:
            try:
                self.notify(record, exc, context)
            except Exception:  # G3: a failing callback is logged, never propagated
                self.logger.exception("backstop on_error callback failed")


class _ToolCatalog:
    """The schemas each tool advertises, learned from ``tools/list`` or the server."""

    def __init__(self) -> None:
        self.input_schemas: dict[str, Any] = {}
        self.output_schemas: dict[str, Any] = {}

    def learn(self, tools: Iterable[Any]) -> None:
        """Remember the input and output schemas of ``tools`` (fastmcp ``Tool`` objects)."""
        for tool in tools:
            name = getattr(tool, "name", None)
            if not isinstance(name, str):
                continue
            self.input_schemas[name] = getattr(tool, "parameters", None)
            self.output_schemas[name] = getattr(tool, "output_schema", None)

    async def ensure(self, context: MiddlewareContext[Any], name: str) -> None:
        """Learn tool ``name``'s schemas from the server, unless they are known."""
        if name in self.input_schemas:
            return
        server = getattr(context.fastmcp_context, "fastmcp", None)
        if server is None:
            return
        try:
            tool = await server.get_tool(name)
        except Exception:
            return
        if tool is not None:
            self.learn([tool])

    async def names(self, context: MiddlewareContext[Any]) -> list[str]:
        """The names of the server's tools (for E8's did-you-mean): listed from the
        server without running its middleware, else the names learnt so far."""
        server = getattr(context.fastmcp_context, "fastmcp", None)
        if server is not None:
            try:
                tools = await server.list_tools(run_middleware=False)
            except Exception:
                logger.debug("backstop could not list the tools", exc_info=True)
            else:
                self.learn(tools)
                return [tool.name for tool in tools]
        return list(self.input_schemas)


def _is_unknown_tool(exc: BaseException, name: str) -> bool:
    """fastmcp's own "no such tool" error (E8): ``NotFoundError("Unknown tool: 'x'")``."""
    return type(exc).__name__ == "NotFoundError" and str(exc).startswith("Unknown tool:") and name in str(exc)


def _protocol_error(error: dict[str, Any]) -> Exception:
    return _ProtocolError(error["code"], error["message"], error.get("data"))


class _ListingMiddleware(Middleware):
    """A middleware that learns the tools from every ``tools/list`` it sees."""

    _catalog: _ToolCatalog

    async def on_list_tools(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Sequence[Any]],
    ) -> Sequence[Any]:
        tools = await call_next(context)
        self._catalog.learn(tools)
        return tools


class ToolErrorResultMiddleware(_ListingMiddleware):
    """Tool-call failures become ``isError`` results (E1–E9, V1–V6); other requests'
    errors become JSON-RPC errors mapped by family (P1, P2) when ``transform_errors``.

    The constructor takes the arguments of libtmux-mcp's class of the same name (and of
    fastmcp's ``ErrorHandlingMiddleware``), with their meaning: ``error_callback`` is
    called as ``error_callback(exception, context)`` for each converted failure.
    Replacing it is a one-line import change. :class:`Backstop` is this and the limiter
    in one.

    Attributes:
        error_counts: converted failures per ``<error_type>:<method>`` (G3).
    """

    def __init__(
        self,
        logger: logging.Logger | None = None,
        include_traceback: bool = False,
        error_callback: FastMCPErrorCallback | None = None,
        transform_errors: bool = True,
    ) -> None:
        notify: _Notify | None = None
        if error_callback is not None:

            def notify(record: dict[str, Any], exc: BaseException, context: MiddlewareContext[Any]) -> None:
                error_callback(exc, context)  # type: ignore[arg-type]

        self._core = _Core(notify, logger)
        self.error_callback = error_callback
        self.include_traceback = include_traceback
        self.transform_errors = transform_errors
        self._catalog = _ToolCatalog()

    @property
    def error_counts(self) -> dict[str, int]:
        """Converted failures per ``<error_type>:<method>`` (G3)."""
        return self._core.error_counts

    def get_error_stats(self) -> dict[str, int]:
        """A copy of :attr:`error_counts`, as fastmcp's ``ErrorHandlingMiddleware`` names it."""
        return dict(self._core.error_counts)

    async def on_call_tool(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        try:
            return await call_next(context)
        except _ProtocolError:
            raise  # P2: a protocol error passes unchanged
        except Exception as exc:
            return await self._convert(context, exc)

    async def on_request(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        try:
            return await call_next(context)
        except _ProtocolError:
            raise
        except Exception as exc:
            if not self.transform_errors or context.method == "tools/call":
                raise
            method = context.method or "unknown"
            uri = getattr(context.message, "uri", None)
            failure = describe(exc, None)
            error, record = _core.request_error(
                failure, method, _revision(context), str(uri) if uri is not None else None
            )
            self._core.record(record, exc, context, failure.get("log_level"))
            raise _protocol_error(error) from exc

    async def _convert(self, context: MiddlewareContext[Any], exc: Exception) -> ToolResult:
        name = context.message.name
        if _is_unknown_tool(exc, name):
            error = _core.unknown_tool_error(name, await self._catalog.names(context))
            raise _protocol_error(error) from exc
        await self._catalog.ensure(context, name)
        arguments = context.message.arguments or {}
        call = {
            "tool": name,
            "arguments": [str(key) for key in arguments],
            "input_schema": _jsonable(self._catalog.input_schemas.get(name)),
            "client": _client(context),
        }
        failure = describe(exc, name)
        result, record = _core.tool_error(failure, call)
        self._core.record(record, exc, context, failure.get("log_level"))
        if self.include_traceback:
            self._core.logger.debug("traceback of %s", name, exc_info=exc)
        return _tool_result(result)


def _tool_names(tools: Iterable[str] | None) -> list[str] | None:
    """The tool names a limit applies to (L1), from any iterable of names (a list, as
    fastmcp and the reference take them, or a set); a bare string is refused, since
    its letters are not names."""
    if tools is None:
        return None
    if isinstance(tools, str):
        raise TypeError("tools must be a collection of tool names, not a str")
    return [str(name) for name in tools]


class TailPreservingResponseLimitingMiddleware(_ListingMiddleware):
    """Oversized tool results are cut from the head under a hard byte cap (L1–L15).

    ``max_size`` is the cap in wire bytes (the result's compact JSON; L4), ``tools``
    the tool names it applies to (all when ``None``; L1). Error results stay errors (L5);
    ``_meta`` is kept and counted (L6); ``structuredContent`` stays valid against the
    tool's ``outputSchema`` (L15). A cap too small for any result is a ``ValueError``
    naming the minimum (L14). The constructor takes the arguments of libtmux-mcp's class
    of the same name.

    Attributes:
        truncations: how many results were cut.
    """

    def __init__(
        self,
        *,
        max_size: int = 1_000_000,
        tools: Iterable[str] | None = None,
        line_align: bool = True,
        truncation_suffix: str | None = None,
        keep: str | Mapping[str, str] | None = None,
    ) -> None:
        # truncation_suffix is accepted for fastmcp's signature; the cut is announced by
        # a header line instead (L3).
        del truncation_suffix
        names = _tool_names(tools)
        policies = dict(keep) if isinstance(keep, Mapping) else keep
        self._limit = _core.Limit(max_size, names, line_align, policies)
        self.max_size = max_size
        self.tools = set(names) if names is not None else None
        self.truncations = 0
        self._catalog = _ToolCatalog()

    async def on_call_tool(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        result = await call_next(context)
        return await self._apply(context, result)

    async def _apply(self, context: MiddlewareContext[Any], result: Any) -> Any:
        # Only complete results: input-required asks and task acknowledgements are
        # other types and pass untouched (L1).
        if type(result) is not ToolResult:
            return result
        name = context.message.name
        if not self._limit.applies_to(name):
            return result
        if surely_fits(result, self._limit.max_bytes, _server_info(context)):
            return result  # L2, without measuring it exactly
        await self._catalog.ensure(context, name)
        data = _result_dict(result)
        stamped = _wire_additions(context, data)
        limited = self._limit.limit(name, data, self._catalog.output_schemas.get(name))
        if limited is None:
            return result
        self.truncations += 1
        data, report = limited
        data.pop("resultType", None)
        if not stamped and isinstance(data.get("_meta"), dict):
            data["_meta"].pop(_SERVER_INFO_META, None)
        logger.info(
            "%s: result cut to %d bytes (%d of %d text bytes dropped)",
            name,
            self._limit.max_bytes,
            report["dropped_bytes"],
            report["original_bytes"],
        )
        return _tool_result(data)


class Backstop(Middleware):
    """backstop in one middleware: ``mcp.add_middleware(Backstop())`` (SPEC A4).

    Tool-call failures become ``isError`` results (E, V); the result — a converted
    failure included — is then limited to ``max_bytes`` of wire size (L; O2); other
    requests' errors become JSON-RPC errors by family (P). Add it first, so that
    middleware added after it still sees failures as failures (O1).

    Args:
        max_bytes: the cap in wire bytes (L2, L4); a cap too small for any result is a
            ``ValueError`` naming the minimum (L14).
        tools: limit only these tools' results (L1); all when ``None``.
        line_align: start the kept tail at a line start when one is near (L9).
        keep: which end of an over-long result is kept (L16): ``"tail"`` (the default;
            logs, scrollback, build output), ``"head"`` (newest-first listings, search
            results, the start of a page), ``"head+tail"`` or ``"head+tail:0.2"`` (both
            ends, the head with that share of the room; a page's title and its
            pagination hint); or a dict of tool names to those (``"*"``: every other
            tool), e.g. ``{"git_log": "head", "fetch": "head+tail:0.2"}``.
        strict: when ``False`` (the default), a result or exception that backstop itself
            cannot translate — an internal fault of backstop, never of the tool — is
            logged and passed on as fastmcp produced it; when ``True`` that fault is
            raised, for tests that want to see it.
        on_error: called with each converted failure's log record and its exception
            (G3); a callback that raises is logged, never propagated.

    Attributes:
        error_counts: converted failures per ``<error_type>:<method>`` (G3).
        truncations: how many results were cut.
    """

    def __init__(
        self,
        max_bytes: int = 1_000_000,
        tools: Iterable[str] | None = None,
        line_align: bool = True,
        strict: bool = False,
        on_error: ErrorCallback | None = None,
        keep: str | Mapping[str, str] | None = None,
    ) -> None:
        self.errors = ToolErrorResultMiddleware()
        if on_error is not None:

            def notify(record: dict[str, Any], exc: BaseException, context: MiddlewareContext[Any]) -> None:
                on_error(record, exc)

            self.errors._core.notify = notify
        self.limiter = TailPreservingResponseLimitingMiddleware(
            max_size=max_bytes, tools=tools, line_align=line_align, keep=keep
        )
        # One catalog for both halves.
        self.limiter._catalog = self.errors._catalog
        self.max_bytes = max_bytes
        self.strict = strict

    @property
    def error_counts(self) -> dict[str, int]:
        """Converted failures per ``<error_type>:<method>`` (G3)."""
        return self.errors.error_counts

    @property
    def truncations(self) -> int:
        """How many results were cut."""
        return self.limiter.truncations

    async def on_list_tools(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Sequence[Any]],
    ) -> Sequence[Any]:
        return await self.errors.on_list_tools(context, call_next)

    async def on_request(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        return await self.errors.on_request(context, call_next)

    async def on_call_tool(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        try:
            result = await call_next(context)
        except _ProtocolError:
            raise
        except Exception as exc:
            try:
                result = await self.errors._convert(context, exc)
            except _ProtocolError:
                raise
            except Exception:
                if self.strict:
                    raise
                logger.exception("backstop could not convert a failure of %s", context.message.name)
                raise exc from None
        try:
            return await self.limiter._apply(context, result)
        except Exception:
            if self.strict:
                raise
            logger.exception("backstop could not limit a result of %s", context.message.name)
            return result
