"""The conformance vectors (``tests/vectors.json``) through the Python package (SPEC A0).

The Rust test ``tests/tests/conformance.rs`` runs every vector through the core, rmcp
and the JSON-RPC shaper and pins the bytes the client gets in an insta snapshot per
vector. Here the same vectors go through what the fastmcp middleware calls: a failure
is raised as a Python exception and read with ``_facts.describe`` (its class, its
ancestors, its ``expected``/``suggestion``/``meta`` attributes), a result is handed over
as the dict the middleware builds, and both go to the core's session machine
(``_core.SessionMachine``, as the middleware drives it: the tool listed, the call
handed over, asked whether it need run, then its outcome), or to
``_core.request_error``. The answer must be the snapshot's bytes.

A vector whose server answers with a JSON-RPC error is not one a Python tool can
produce: in process, a tool that raises the SDK's protocol error chose it, and it
passes as it is (P2); the vectors with such an outcome are the proxy's.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from backstop import _core
from backstop._facts import describe

ROOT = pathlib.Path(__file__).resolve().parents[3]
VECTORS = json.loads((ROOT / "tests" / "vectors.json").read_text())
SNAPSHOTS = ROOT / "tests" / "tests" / "snapshots"

#: A base class that names each failure family the way a Python server's own types do (P1).
_FAMILY_BASES: dict[str, type[BaseException]] = {
    "not_found": LookupError,
    "permission": PermissionError,
    "timeout": TimeoutError,
}


def _snapshot(name: str) -> str:
    """The bytes the conformance test pinned for vector ``name``."""
    text = (SNAPSHOTS / f"conformance__{name}.snap").read_text()
    return text.split("\n---\n", 1)[1].strip()


def _canonical(value: Any) -> str:
    """JSON as the Rust test writes it: compact, keys sorted, non-ASCII as UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _exception(failure: dict[str, Any]) -> BaseException:
    """The exception a Python tool raises for a vector's failure."""
    expected = bool(failure.get("expected"))
    name = failure.get("error_type") or ("ExpectedToolError" if expected else "ToolError")
    base = _FAMILY_BASES.get(failure.get("family", ""), Exception)
    cls = type(name, (base,), {})
    exc = cls(failure["message"])
    exc.expected = expected  # type: ignore[attr-defined]
    if "suggestion" in failure:
        exc.suggestion = failure["suggestion"]  # type: ignore[attr-defined]
    if "meta" in failure:
        exc.meta = failure["meta"]  # type: ignore[attr-defined]
    return exc


def _session(vector: dict[str, Any]) -> dict[str, Any]:
    """The handshake before 2026-07-28, the request's ``_meta`` from it (R2, R3)."""
    if vector["revision"] < "2026-07-28":
        return {
            "handshake": {"protocolVersion": vector["revision"], "clientInfo": vector["client"]},
            "meta": None,
        }
    meta = {
        "io.modelcontextprotocol/protocolVersion": vector["revision"],
        "io.modelcontextprotocol/clientInfo": vector["client"],
    }
    return {"handshake": None, "meta": meta}


def _through_python(vector: dict[str, Any]) -> str:
    outcome = vector["outcome"]
    method = vector.get("method", "tools/call")
    session = _session(vector)
    if method != "tools/call":
        failure = describe(_exception(outcome["failure"]))
        error, _record = _core.request_error(failure, method, uri=vector.get("uri"), session=session)
        return _canonical({"error": error})
    machine = _core.SessionMachine(_core.Limit(vector["cap"], keep=vector.get("keep")))
    machine.client_request(1, "tools/list", may_send=False)
    machine.server_response(1, {"tools": [vector["tool"]]})
    own = machine.client_request(
        2,
        "tools/call",
        tool=vector["call"],
        arguments=vector.get("arguments", {}),
        meta=session["meta"],
        handshake=session["handshake"],
    )
    while own is not None:  # in process a name the catalog lacks is listed for (R5)
        own = machine.own_listing_answer({"tools": [vector["tool"]]})
    decided = machine.before_running(2)
    if decided is None and "failure" in outcome:
        failure = describe(_exception(outcome["failure"]), vector["call"])
        decided = machine.server_failure(2, failure)
    elif decided is None:
        decided = machine.server_result(2, outcome["result"])
    sent, error, _truncation = decided
    if sent is None and error is None:
        sent = outcome["result"]  # as the tool returned it
    if error is not None:
        return _canonical({"error": error})
    if vector["revision"] >= "2026-07-28":
        # What the SDK writes after the middleware on this revision (R4), on a result
        # the machine let pass (it counted it in the cap, L4).
        sent = {**sent, "resultType": sent.get("resultType", "complete")}
    return _canonical({"result": sent})


PYTHON_VECTORS = [v for v in VECTORS if "error" not in v["outcome"]]


def test_the_vectors_a_python_tool_can_produce_are_most_of_them() -> None:
    assert len(PYTHON_VECTORS) >= len(VECTORS) - 5


@pytest.mark.parametrize("vector", PYTHON_VECTORS, ids=[v["name"] for v in PYTHON_VECTORS])
def test_a0_the_python_package_gives_the_same_bytes_as_every_other_path(vector: dict[str, Any]) -> None:
    assert _through_python(vector) == _snapshot(vector["name"])
