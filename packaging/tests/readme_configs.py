"""The MCP client config lines of the README's "Use it" section, parsed and run as written.

    python3 readme_configs.py list        # INDEX<TAB>LABEL for each distinct command
    python3 readme_configs.py run INDEX   # runs that command as an MCP server, checks it

Every ```json and ```toml block of the section must parse, and every server entry in it
(`mcpServers` for Claude Desktop and Cursor, `servers` for VS Code, `mcp_servers` for
Codex) is collected as (command, args). Entries with the same command line are run once;
each must put backstop in front of the reference server (wire.py's `everything` checks:
E8 at the wire, a short result whole). The environment decides which `uvx`, `npx` and
`backstop` run: scripts/test-packages points them at the built packages.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    sys.exit("readme_configs.py needs Python 3.11 or newer (tomllib)")

sys.path.insert(0, str(Path(__file__).parent))
import wire

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Use it"
BLOCK = re.compile(r"^```(json|toml)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def section(text: str) -> str:
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else len(text)]


def entries() -> list[tuple[str, list[str]]]:
    """(where, [command, *args]) for every server entry of every config block."""
    found = []
    for kind, body in BLOCK.findall(section(README.read_text())):
        config = json.loads(body) if kind == "json" else tomllib.loads(body)
        for key in ("mcpServers", "servers", "mcp_servers"):
            for name, server in config.get(key, {}).items():
                if server.get("type", "stdio") != "stdio":
                    raise ValueError(f"{key}.{name} is not a stdio server")
                found.append((f"{key}.{name}", [server["command"], *server.get("args", [])]))
    if not found:
        raise ValueError(f"no config entries under {SECTION!r} in {README}")
    return found


def distinct() -> list[tuple[str, list[str]]]:
    """One (label, command line) per distinct command line, the label naming its entries."""
    by_line: dict[tuple[str, ...], list[str]] = {}
    for where, line in entries():
        by_line.setdefault(tuple(line), []).append(where)
    return [
        (f"{line[0]} ({len(wheres)} entries: {', '.join(wheres)})", list(line))
        for line, wheres in by_line.items()
    ]


def main(argv: list[str]) -> int:
    commands = distinct()
    if argv == ["list"]:
        for index, (label, _) in enumerate(commands):
            print(f"{index}\t{label}")
        return 0
    if len(argv) == 2 and argv[0] == "run":
        label, line = commands[int(argv[1])]
        try:
            failures = wire.check("everything", None, line)
        except Exception as error:  # a dead or silent server is a failed check, said as one
            failures = [f"{label}: {type(error).__name__}: {error}"]
        for failure in failures:
            print(f"  FAIL {failure}", file=sys.stderr)
        return 1 if failures else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
