"""What an exception says about a failure, as plain data for the core.

The core (``backstop._core``) decides; this module only reads the facts a Python
exception carries and that a server-side middleware alone can see: the exception's
class and ancestors, its cause chain, the attributes a server put on it (``expected``,
``suggestion``, ``log_level``) and pydantic's structured errors. Nothing here imports
fastmcp: the framework's wrappers are recognised by their class names and messages, so
no private name is imported.
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["declared_log_level", "describe", "is_argument_validation", "pydantic_errors"]

#: fastmcp wraps a handler's exception in one of these, raised from it, with a message
#: ``Error calling tool 'name': <message>`` (``Error reading resource 'uri': …``, …), or
#: without ``: <message>`` when it masks error details.
_WRAPPER_TYPES = ("ToolError", "ResourceError", "PromptError")
_WRAPPER = re.compile(
    r"Error (?:calling tool|reading resource|rendering prompt|getting prompt) "
    r"(?P<name>'[^']*'|\"[^\"]*\")(?P<rest>: .*)?\Z",
    re.DOTALL,
)

#: fastmcp's private tag on a pydantic error raised in a tool's *body* (not its
#: arguments); recognised by name, never imported.
_BODY_ERROR = "_ToolBodyError"


def _cause(exc: BaseException) -> BaseException | None:
    """The nearest cause: an explicit ``__cause__``, else an unsuppressed ``__context__``."""
    if exc.__cause__ is not None:
        return exc.__cause__
    if exc.__context__ is not None and not exc.__suppress_context__:
        return exc.__context__
    return None


def _is_pydantic_validation_error(exc: BaseException) -> bool:
    try:
        from pydantic import ValidationError
    except ImportError:  # pragma: no cover - fastmcp depends on pydantic
        return False
    return isinstance(exc, ValidationError)


def unwrap(exc: BaseException, tool: str | None) -> tuple[BaseException, str | None, bool]:
    """The exception the tool raised, the message to show when fastmcp masked it, and
    whether it came from the tool's body (fastmcp tagged it as a body error).

    fastmcp turns a tool body's exception into ``ToolError("Error calling tool
    'name': <message>")`` raised *from* it (or, with ``mask_error_details``, the message
    without ``: <message>``), and a pydantic error of the body into its private
    ``_ToolBodyError`` first. Both wrappers are seen through; a masked message stays
    masked (the server chose not to show the details) while the type is the real one.
    """
    masked: str | None = None
    message = str(exc)
    wrapped = _WRAPPER.match(message)
    if (
        type(exc).__name__ in _WRAPPER_TYPES
        and exc.__cause__ is not None
        and wrapped is not None
        and (tool is None or wrapped.group("name") == repr(tool))
    ):
        if wrapped.group("rest") is None:
            masked = message
        exc = exc.__cause__
    body = False
    while type(exc).__name__ == _BODY_ERROR and exc.__cause__ is not None:
        exc = exc.__cause__
        body = True
    return exc, masked, body


def is_argument_validation(exc: BaseException) -> BaseException | None:
    """The pydantic error of a rejected argument set, if ``exc`` is one (V1).

    fastmcp raises its own ``ValidationError`` from pydantic's for a call whose
    arguments do not validate, and lets a bare pydantic error out of the call adapter
    only for arguments (a body's is tagged and wrapped; see :func:`unwrap`).
    """
    if _is_pydantic_validation_error(exc):
        # fastmcp 4.0 lets a body's pydantic error out bare too: the model's title
        # tells them apart (``call[<tool>]`` for a call's arguments, as pydantic names
        # a validated call; the model's name for a body's).
        title = str(getattr(exc, "title", ""))
        about_arguments = title.startswith("call[") or title.endswith("Arguments")
        return exc if about_arguments else None
    if (
        type(exc).__name__ == "ValidationError"
        and exc.__cause__ is not None
        and _is_pydantic_validation_error(exc.__cause__)
    ):
        return exc.__cause__
    return None


def _input_text(value: Any) -> str:
    """The rejected value as text, for the core to tell whether a message quotes it."""
    if isinstance(value, str):
        return value
    try:
        return repr(value)
    except Exception:  # a repr that fails says nothing a message could quote
        return ""


def pydantic_errors(error: BaseException) -> list[dict[str, Any]]:
    """pydantic's structured errors as plain data: ``loc``, ``type``, ``msg``, ``input``.

    ``input`` is the rejected value as text; the core reads it only to redact messages
    that quote it (V3) and never returns it.
    """
    errors = error.errors(include_url=False, include_context=False)  # type: ignore[attr-defined]
    out: list[dict[str, Any]] = []
    for item in errors:
        entry: dict[str, Any] = {
            "loc": [str(part) if not isinstance(part, (str, int)) else part for part in item.get("loc", ())],
            "type": str(item.get("type", "")),
            "msg": str(item.get("msg", "")),
        }
        if "input" in item:
            entry["input"] = _input_text(item["input"])
        out.append(entry)
    return out


def declared_log_level(exc: BaseException) -> int | None:
    """The failure's own log level (G1) as a :mod:`logging` level number: its
    ``log_level`` attribute, a number or a level's name.

    Every fastmcp error carries ``log_level``, the number ERROR by default: that is not
    taken as a declaration, so an expected failure that declares nothing logs at WARNING.
    """
    level = getattr(exc, "log_level", None)
    if isinstance(level, bool):
        return None
    if isinstance(level, int):
        return None if level == logging.ERROR else level
    if isinstance(level, str):
        number = logging.getLevelName(level.upper())
        return number if isinstance(number, int) else None
    return None


def _is_expected(exc: BaseException) -> bool:
    """Declared expected: a true ``expected`` attribute, or an ``ExpectedToolError`` class."""
    if getattr(exc, "expected", False) is True:
        return True
    return any(cls.__name__ == "ExpectedToolError" for cls in type(exc).__mro__)


def describe(exc: BaseException, tool: str | None = None) -> dict[str, Any]:
    """The failure ``exc`` describes, as the dict ``backstop._core`` reads.

    Either ``{"validation": [...]}`` for a rejected argument set, or the exception's
    facts: ``type_name``, ``ancestors``, ``message``, ``causes``, ``expected``,
    ``suggestion``, ``level`` (its declared level's name, for the core), ``log_level``
    (the same as a :mod:`logging` number, which the middleware logs at: G1), ``meta`` (a
    ``meta`` dict attribute: its own ``_meta`` keys, E7).
    """
    exc, masked, body = unwrap(exc, tool)
    validation = None if body else is_argument_validation(exc)
    if validation is not None:
        return {"validation": pydantic_errors(validation)}
    cause = _cause(exc)
    suggestion = getattr(exc, "suggestion", None)
    meta = getattr(exc, "meta", None)
    level = declared_log_level(exc)
    return {
        "type_name": type(exc).__name__,
        "ancestors": [cls.__name__ for cls in type(exc).__mro__],
        "message": masked if masked is not None else str(exc),
        "causes": [type(cause).__name__] if cause is not None else [],
        "expected": _is_expected(exc),
        "suggestion": suggestion if isinstance(suggestion, str) and suggestion else None,
        "level": logging.getLevelName(level) if level is not None else None,
        "log_level": level,
        "meta": _jsonable_meta(meta),
    }


def _jsonable_meta(meta: Any) -> dict[str, Any]:
    """A failure's own ``meta`` dict (E7) as JSON data; anything else is none."""
    if not isinstance(meta, dict):
        return {}
    try:
        import pydantic_core

        data = pydantic_core.to_jsonable_python(meta, fallback=str)
    except Exception:
        return {}
    return {str(key): value for key, value in data.items()} if isinstance(data, dict) else {}
