"""backstop for fastmcp servers: one middleware, ``mcp.add_middleware(Backstop())``.

:class:`Backstop` does both of backstop's jobs in the right order by construction: a
failed tool call becomes an ``isError`` result the model can read (SPEC E1–E9, V1–V6),
and an oversized result — that one included — is cut from the head under a hard byte
cap (L1–L15; O1–O3). Errors of other requests become JSON-RPC errors mapped by family
(P1, P2). Failures are logged through :mod:`logging` (logger ``backstop``) at their own
level, and counted (G1–G3).

This module decides nothing (SPEC A0): it drives the core's session machine
(``backstop._core.SessionMachine``, one per middleware instance, serving every session
of the server), which makes every decision — when to list the tools first and when a
call need not run (E8, V6), what a failure or a result becomes (E1–E9, V1–V5, L1–L17,
in the order O2 requires), what is logged and counted (G1–G3). What this module
translates, and nothing more:

- a ``tools/call`` into the machine's request: the tool, its arguments (the core
  keeps their names and the shapes of their values, never a value: V2, V3), the
  request's ``_meta`` and the session's ``initialize`` params (R2, R3);
- the server's tools, listed through fastmcp's public ``list_tools`` and ``get_tool``
  when the machine asks, and the tools a client's own ``tools/list`` returns, into
  ``tools/list`` results (fastmcp tells a middleware nothing when its tools change: a
  name the machine's catalog lacks, or fastmcp's own ``Unknown tool`` error, is taken
  as that word);
- an exception into its facts (``_facts.describe``), a fastmcp ``ToolResult`` into a
  dict with MCP's wire names (its texts referenced, not copied), and the server's
  identity into the stamp its SDK adds (R4);
- the machine's answer back into a ``ToolResult`` or a raised protocol error, and its
  log records into :mod:`logging` records.

Errors of other requests go to ``backstop._core.request_error`` (P1, P2, R3).

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
import itertools
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

_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


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


def _wire_data(value: Any) -> dict[str, Any] | None:
    """A result as MCP's wire data: a dict as it is, a pydantic model dumped with its wire
    names; None for anything else."""
    if isinstance(value, dict):
        return value
    try:
        dumped = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    except Exception:
        return None
    return dumped if isinstance(dumped, dict) else None


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


def _handshake(context: MiddlewareContext[Any]) -> dict[str, Any] | None:
    """The session's ``initialize`` parameters the core reads (R2, R3), as MCP names them."""
    params = _client_params(context)
    if params is None:
        return None
    # The SDK's field names first: a missing attribute of a pydantic model costs an exception.
    version = getattr(params, "protocol_version", None) or getattr(params, "protocolVersion", None)
    info = getattr(params, "client_info", None) or getattr(params, "clientInfo", None)
    handshake: dict[str, Any] = {}
    if isinstance(version, str):
        handshake["protocolVersion"] = version
    if info is not None and getattr(info, "name", None):
        handshake["clientInfo"] = {"name": str(info.name), "version": str(getattr(info, "version", ""))}
    return handshake


def _session(context: MiddlewareContext[Any]) -> dict[str, Any]:
    """What the core reads the client and the revision from (R2, R3): the handshake, and
    the request's ``_meta`` (MCP 2026-07-28)."""
    return {"handshake": _handshake(context), "meta": _request_meta(context.message) or None}


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


def _tool_entry(tool: Any) -> dict[str, Any] | None:
    """A fastmcp ``Tool`` as the MCP ``Tool`` dict the catalog learns: its name and schemas."""
    name = getattr(tool, "name", None)
    if not isinstance(name, str):
        return None
    return {
        "name": name,
        "inputSchema": _jsonable(getattr(tool, "parameters", None)),
        "outputSchema": _jsonable(getattr(tool, "output_schema", None)),
    }


def _tool_entries(tools: Iterable[Any]) -> list[dict[str, Any]]:
    return [entry for entry in map(_tool_entry, tools) if entry is not None]


def _protocol_error(error: dict[str, Any]) -> Exception:
    return _ProtocolError(error["code"], error["message"], error.get("data"))


def _tool_names(tools: Iterable[str] | None) -> list[str] | None:
    """The tool names a limit applies to (L1), from any iterable of names (a list, as
    fastmcp and the reference take them, or a set); a bare string is refused, since
    its letters are not names."""
    if tools is None:
        return None
    if isinstance(tools, str):
        raise TypeError("tools must be a collection of tool names, not a str")
    return [str(name) for name in tools]


class _Driver(Middleware):
    """What the three middleware classes share: a driver of the core's session machine
    for one server.

    For each ``tools/call`` it hands the machine the request (the tool, the names of its
    arguments, the request's ``_meta``, the session's ``initialize`` params), lists the
    server's tools when the machine asks (E8, R5), asks whether the call need run at
    all (E8, V6), runs it, and hands over what it returned or raised; it sends what the
    machine answers, and logs the records the machine makes (G1, G2). Which halves of
    the job a class does is set by its constructor: ``_converts`` (failures become
    results) and the limit (one that applies to no tool for the converter alone).
    """

    _converts: bool
    _limit: Any
    _strict: bool
    transform_errors: bool
    include_traceback: bool
    truncations: int

    def _start(
        self,
        *,
        converts: bool,
        limit: Any,
        notify: _Notify | None,
        log: logging.Logger | None,
        strict: bool,
        transform_errors: bool,
        strict_arguments: bool = False,
    ) -> None:
        self._converts = converts
        self._limit = limit
        self._notify = notify
        self._logger = log or logger
        self._strict = strict
        # One machine for every session of the server: each request names its session.
        self._machine = _core.SessionMachine(limit, strict=strict_arguments)
        self._ids = itertools.count(1)
        self._stamp: dict[str, Any] | None = None
        # The failures of requests other than tools/call (the machine counts the calls').
        self._counts = _core.ErrorCounts()
        self.transform_errors = transform_errors
        self.include_traceback = False
        self.truncations = 0

    @property
    def error_counts(self) -> dict[str, int]:
        """Converted failures per ``<error_type>:<method>`` (G3)."""
        return {**self._machine.error_counts(), **self._counts.as_dict()}

    def get_error_stats(self) -> dict[str, int]:
        """A copy of :attr:`error_counts`, as fastmcp's ``ErrorHandlingMiddleware`` names it."""
        return self.error_counts

    def _record(
        self,
        record: dict[str, Any],
        exc: BaseException | None,
        context: MiddlewareContext[Any],
        log_level: int | None = None,
    ) -> None:
        """Log and report one record the core made (G1–G3; the core counted it):
        at ``log_level``, the failure's own level as a number (CRITICAL or a custom one
        included), else at the level the core chose."""
        level = log_level if log_level is not None else _LEVELS.get(record["level"], logging.ERROR)
        self._logger.log(
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
        if self._notify is not None and exc is not None:
            try:
                self._notify(record, exc, context)
            except Exception:  # G3: a failing callback is logged, never propagated
                self._logger.exception("backstop on_error callback failed")

    async def on_list_tools(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Sequence[Any]],
    ) -> Sequence[Any]:
        tools = await call_next(context)
        try:  # the client's own listing teaches the machine too
            self._learn({"tools": _tool_entries(tools)})
        except Exception:
            if self._strict:
                raise
            logger.exception("backstop could not read a tools/list")
        return tools

    def _learn(self, page: dict[str, Any]) -> None:
        """Hand the machine a listing of the tools as a ``tools/list`` and its result."""
        request = next(self._ids)
        try:
            self._machine.client_request(request, "tools/list", may_send=False)
            self._machine.server_response(request, page)
        finally:
            self._machine.forget(request)

    async def on_call_tool(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        request = next(self._ids)
        try:
            return await self._call(context, call_next, context.message.name, request)
        finally:
            self._machine.forget(request)  # answered, raised or cancelled: not pending

    async def _call(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
        name: str,
        request: int,
    ) -> Any:
        try:
            decided = await self._before_running(context, name, request)
            if decided is not None:
                sent = self._send(context, name, None, decided)
                if sent is not None:
                    return sent
        except _ProtocolError:
            raise
        except Exception:
            if self._strict:
                raise
            logger.exception("backstop could not prepare a call of %s", name)
        try:
            result = await call_next(context)
        except _ProtocolError:
            raise  # P2: a protocol error passes unchanged
        except Exception as exc:
            if not self._converts:
                raise
            try:
                sent = await self._failed(context, name, request, exc)
            except _ProtocolError:
                raise
            except Exception:
                if self._strict:
                    raise
                logger.exception("backstop could not convert a failure of %s", name)
                raise exc from None
            if sent is None:
                raise
            return sent
        # Only complete results are shaped: input-required asks and task handles are
        # other types and pass untouched (L1); the machine learns a task's handle, to
        # shape the task's state when `tasks/get` reads it.
        if type(result) is not ToolResult:
            self._hand_over(request, result)
            return result
        try:
            decided = self._machine.server_result(request, _result_dict(result))
            sent = self._send(context, name, None, decided)
        except _ProtocolError:
            raise
        except Exception:
            if self._strict:
                raise
            logger.exception("backstop could not limit a result of %s", name)
            return result
        return result if sent is None else sent

    async def _before_running(
        self, context: MiddlewareContext[Any], name: str, request: int
    ) -> tuple[Any, Any, Any] | None:
        """Hand the call to the machine, list the server's tools if it asks (E8, R5),
        and its answer when the call need not run (E8, V6; the converters only)."""
        machine = self._machine
        # In process the machine lists for every name its catalog lacks (fastmcp tells
        # a middleware nothing of a change of its tools).
        arguments = context.message.arguments or {}
        if not isinstance(arguments, dict):
            arguments = [str(key) for key in arguments]
        own = machine.client_request(
            request,
            "tools/call",
            tool=name,
            arguments=arguments,
            meta=_request_meta(context.message) or None,
            handshake=_handshake(context),
        )
        await self._list(context, name, own)
        stamp = _server_info(context)
        if stamp != self._stamp:
            machine.set_server_stamp(stamp)
            self._stamp = stamp
        return machine.before_running(request) if self._converts else None

    async def _list(self, context: MiddlewareContext[Any], name: str, own: Any) -> None:
        """Make the listing the machine asked for (``own``: its request, or None), each
        page handed to it until it asks for no more."""
        while own is not None:
            try:
                page = await self._listing(context, name)
            except BaseException:  # a cancellation: the listing ends here
                self._machine.own_listing_answer(None)
                raise
            own = self._machine.own_listing_answer(page)

    async def _listing(self, context: MiddlewareContext[Any], name: str) -> dict[str, Any] | None:
        """The server's tools as a ``tools/list`` result, through fastmcp's public API
        (every tool, without running middleware), or None when they cannot be listed.
        A tool ``name`` that answers but is not listed (an injected one) is in it too.
        fastmcp lists in one page: no ``nextCursor``."""
        server = getattr(context.fastmcp_context, "fastmcp", None)
        if server is None:
            return None
        try:
            tools = _tool_entries(await server.list_tools(run_middleware=False))
            if all(tool["name"] != name for tool in tools):
                tool = await server.get_tool(name)
                if tool is not None:
                    tools += _tool_entries([tool])
        except Exception:
            logger.debug("backstop could not list the tools", exc_info=True)
            return None
        return {"tools": tools}

    async def _failed(
        self, context: MiddlewareContext[Any], name: str, request: int, exc: BaseException
    ) -> ToolResult | None:
        """The machine's answer to a call whose tool raised ``exc``; None: raise it."""
        failure = describe(exc, name)
        decided = self._machine.server_failure(request, failure)
        if isinstance(decided, dict):
            # The machine read the server's word that it has no such tool: its tools
            # changed since they were listed. List them, then ask again (E8, R5).
            await self._list(context, name, decided)
            decided = self._machine.before_running(request)
            if decided is None:
                decided = self._machine.server_failure(request, failure)
        return self._send(context, name, exc, decided, failure)

    def _hand_over(self, request: int, result: Any) -> None:
        """A result of another kind than ``ToolResult``, handed to the machine as wire
        data: it learns a task's handle from it (2026-07-28 tasks extension)."""
        dumped = _wire_data(result)
        if dumped is not None:
            self._machine.server_response(request, dumped)

    async def _task_state(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        """``tasks/get`` (2026-07-28 tasks extension): the task's state with the outcome
        of the call that created it shaped as that call's (L1, E11)."""
        message = context.message  # the params as sent (a dict), or a model of them
        if isinstance(message, dict):
            task_id, meta = message.get("taskId"), message.get("_meta")
        else:
            task_id, meta = getattr(message, "task_id", None), _request_meta(message)
        request = next(self._ids)
        try:
            self._machine.client_request(
                request,
                "tasks/get",
                task_id=task_id if isinstance(task_id, str) else None,
                meta=meta if isinstance(meta, dict) and meta else None,
                handshake=_handshake(context),
                may_send=False,
            )
            state = await call_next(context)
            dumped = _wire_data(state)
            if dumped is None:
                return state
            decided = self._machine.server_response(request, dumped)
            sent = self._report(context, "tasks/get", None, decided)
            return state if sent is None else sent
        finally:
            self._machine.forget(request)

    def _send(
        self,
        context: MiddlewareContext[Any],
        name: str,
        exc: BaseException | None,
        decided: tuple[Any, Any, Any],
        failure: dict[str, Any] | None = None,
    ) -> ToolResult | None:
        """The machine's answer translated back for fastmcp: the result to send, None
        to send the tool's own outcome as it is, or the protocol error raised (E8)."""
        sent = self._report(context, name, exc, decided, failure)
        return None if sent is None else _tool_result(sent)

    def _report(
        self,
        context: MiddlewareContext[Any],
        name: str,
        exc: BaseException | None,
        decided: tuple[Any, Any, Any],
        failure: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Log what the machine recorded and cut: the data it sends instead (None: the
        answer as it is), or the protocol error raised (E8)."""
        sent, error, truncation = decided
        for record in self._machine.take_log_records():
            self._record(record, exc, context, failure.get("log_level") if failure else None)
            if exc is not None and self.include_traceback:
                self._logger.debug("traceback of %s", name, exc_info=exc)
        if error is not None:
            raise _protocol_error(error) from exc
        if sent is None:
            return None
        if truncation is not None:
            self.truncations += 1
            logger.info(
                "%s: result cut to %d bytes (%d of %d text bytes dropped)",
                name,
                self._limit.max_bytes,
                truncation["dropped_bytes"],
                truncation["original_bytes"],
            )
        return sent

    async def on_request(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        try:
            if context.method == "tasks/get":
                return await self._task_state(context, call_next)
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
                failure,
                method,
                uri=str(uri) if uri is not None else None,
                session=_session(context),
                counts=self._counts,
            )
            self._record(record, exc, context, failure.get("log_level"))
            raise _protocol_error(error) from exc


#: A limit that applies to no tool: the converter alone limits nothing.
def _no_limit() -> Any:
    return _core.Limit(tools=[])


class ToolErrorResultMiddleware(_Driver):
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

        self._start(
            converts=True,
            limit=_no_limit(),
            notify=notify,
            log=logger,
            strict=True,
            transform_errors=transform_errors,
        )
        self.error_callback = error_callback
        self.include_traceback = include_traceback


class TailPreservingResponseLimitingMiddleware(_Driver):
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
        limit = _core.Limit(max_size, names, line_align, policies)
        self._start(converts=False, limit=limit, notify=None, log=None, strict=True, transform_errors=False)
        self.max_size = max_size
        self.tools = set(names) if names is not None else None


class Backstop(_Driver):
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
        strict_arguments: V6's strict mode: a call that gives an argument the tool's
            input schema does not name is rejected before the tool runs (an ``isError``
            result naming it, V4). Off by default: the tool's own validation decides.
        max_chars: the most characters (UTF-16 code units) of a result's text that reach
            the model, or ``"none"`` (L18). ``None`` (the default): the limit of the
            client that reads it, by its name (Claude Code 50,000, Gemini CLI 39,959; a
            client without a profile the smallest), so that the client passes the cut
            on as it is instead of cutting it again or saving it to a file.
        max_tokens: the most tokens of a result's text (4 ASCII bytes, or one other
            character, a token), or ``"none"``; ``None``: the client's (Codex 11,950,
            Claude Code 25,000 or ``MAX_MCP_OUTPUT_TOKENS`` from the environment).

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
        strict_arguments: bool = False,
        max_chars: int | str | None = None,
        max_tokens: int | str | None = None,
    ) -> None:
        notify: _Notify | None = None
        if on_error is not None:

            def notify(record: dict[str, Any], exc: BaseException, context: MiddlewareContext[Any]) -> None:
                on_error(record, exc)

        policies = dict(keep) if isinstance(keep, Mapping) else keep
        limit = _core.Limit(max_bytes, _tool_names(tools), line_align, policies, max_chars, max_tokens)
        self._start(
            converts=True,
            limit=limit,
            notify=notify,
            log=None,
            strict=strict,
            transform_errors=True,
            strict_arguments=strict_arguments,
        )
        self.max_bytes = max_bytes
        self.strict = strict
