"""backstop._core, the native module, on its own: plain data in, the core's decisions out."""

from __future__ import annotations

import doctest
from pathlib import Path

import backstop
import pytest
from backstop import _core


def test_py_typed_shipped() -> None:
    """The package says it is typed (PEP 561): ``py.typed`` beside the stubs of ``_core``."""
    package = Path(backstop.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_core.pyi").is_file()


def test_package_docstring_examples_run() -> None:
    assert doctest.testmod(backstop).failed == 0


def test_e3_p1_classify_names_the_cause_and_the_family() -> None:
    failure = _core.classify(
        {
            "type_name": "ResourceError",
            "ancestors": ["ResourceError", "FastMCPError", "Exception"],
            "message": "Session not found: missing",
            "causes": ["SessionNotFound"],
        }
    )
    assert failure["error_type"] == "SessionNotFound"  # E3: one hop
    assert failure["family"] == "not_found"  # P1: by family, through the cause
    assert failure["expected"] is False


def test_v3_messages_lose_pydantic_input_values() -> None:
    text = "1 validation error for Order\ncount\n  Input should be a valid integer [type=int_parsing, input_value='hunter2', input_type=str]"
    failure = _core.classify({"type_name": "ValidationError", "message": text})
    assert "hunter2" not in failure["message"]


def test_v2_v3_validation_text_from_structured_errors() -> None:
    errors = [
        {"loc": ["name"], "type": "value_error", "msg": "Value error, hunter2 is taken", "input": "hunter2"}
    ]
    text = _core.validation_text("register", errors)
    assert text == "1 validation error for register\nname\n  Invalid value [type=value_error]"


def test_e8_unknown_tool_error() -> None:
    error = _core.unknown_tool_error("list_pane", ["list_panes", "send_keys"])
    assert error == {
        "code": -32602,
        "message": "Unknown tool: list_pane",
        "data": {"suggestion": "Did you mean 'list_panes'?"},
    }


def test_g1_tool_error_record_level() -> None:
    result, record = _core.tool_error(
        {"type_name": "ExpectedToolError", "message": "no pane", "expected": True, "level": "INFO"},
        {"tool": "send_keys", "arguments": ["pane"]},
    )
    assert result["isError"] is True
    assert record["level"] == "info"
    assert record["count_key"] == "ExpectedToolError:tools/call"


def test_l14_limit_refuses_a_cap_too_small() -> None:
    with pytest.raises(ValueError, match=f"the minimum is {backstop.MIN_BYTES} bytes"):
        backstop.Limit(backstop.MIN_BYTES - 1)
    assert backstop.Limit(backstop.MIN_BYTES).max_bytes == backstop.MIN_BYTES


def test_bad_shapes_are_exceptions_not_crashes() -> None:
    limit = backstop.Limit(1000)
    with pytest.raises(ValueError):
        limit.limit("t", {"content": "not a list"})
    with pytest.raises(ValueError):
        limit.limit_json("t", b"{not json")
    with pytest.raises(TypeError):
        _core.classify("not a dict")
    nested: list = []
    for _ in range(1000):
        nested = [nested]
    with pytest.raises(ValueError):
        limit.limit("t", {"content": [], "structuredContent": nested})
