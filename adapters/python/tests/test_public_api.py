"""SPEC A4: backstop hooks fastmcp only through its public API, so that it works on every
fastmcp 4.x release. The reference broke on fastmcp 4.1 by overriding a private method
(``_truncate_to_result``); these tests keep backstop from doing either of:

- overriding a private (``_``-prefixed) method of fastmcp's ``Middleware``;
- reading or calling a private attribute of an object it does not own (a fastmcp
  server, context or result): every ``obj._name`` in backstop's source names something
  backstop itself defines.

Reading a fastmcp exception's *class name* to see through a wrapper (``_facts.py``) is
a string comparison, not an attribute access, and is allowed.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import backstop
import backstop.fastmcp
from fastmcp.server.middleware import Middleware

SOURCES = sorted(Path(backstop.__file__).parent.glob("*.py"))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_private_names(trees: list[ast.Module]) -> set[str]:
    """The private names backstop defines: its functions, methods, module and class
    attributes, and the attributes it assigns (``self._x = ...``)."""
    names: set[str] = {"_core"}  # the native module, backstop._core
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(
                    target.attr
                    for target in targets
                    if isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                )
    return {name for name in names if _is_private(name)}


def test_a4_no_private_attribute_of_a_foreign_object_is_used() -> None:
    trees = [ast.parse(path.read_text(), str(path)) for path in SOURCES]
    own = _defined_private_names(trees)
    foreign = [
        f"{path.name}:{node.lineno}: .{node.attr}"
        for path, tree in zip(SOURCES, trees)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in own
    ]
    assert foreign == []


def test_a4_no_private_fastmcp_method_is_overridden() -> None:
    middleware = [
        cls
        for _, cls in inspect.getmembers(backstop.fastmcp, inspect.isclass)
        if issubclass(cls, Middleware) and cls.__module__ == "backstop.fastmcp"
    ]
    assert {cls.__name__ for cls in middleware} >= {
        "Backstop",
        "ToolErrorResultMiddleware",
        "TailPreservingResponseLimitingMiddleware",
    }
    overridden = [
        f"{cls.__name__}.{name}"
        for cls in middleware
        for klass in cls.__mro__
        if klass.__module__ == "backstop.fastmcp"
        for name in vars(klass)
        if _is_private(name) and hasattr(Middleware, name)
    ]
    assert overridden == []
