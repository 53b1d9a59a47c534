// A client on the official TypeScript SDK 2.x (`@modelcontextprotocol/client` from npm),
// which validates every result it gets — on MCP 2026-07-28 each must carry
// `resultType` — for the end-to-end tests of what backstop builds:
//
//     node typescript_v2_client.mjs REVISION http URL
//     node typescript_v2_client.mjs REVISION stdio COMMAND ARGS...
//
// REVISION is `2026-07-28` (the SDK's negotiation pinned to it: `server/discover`,
// then the per-request `_meta` envelope) or `2025-11-25` (the SDK's default: the 2025
// `initialize` handshake). The calls are read from the environment, BACKSTOP_CALLS =
// `[[tool, arguments], ...]`. It prints one JSON line: `{"calls": [...]}`, each entry
// the result the SDK accepted (`{"result": ...}`) or what it threw
// (`{"thrown": {"code", "message", "data"}}`).
//
// The SDK is resolved from BACKSTOP_NODE_PEERS (default: target/node-peers of this
// checkout), where .ci/run installs tests/peers/package.json.

import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.BACKSTOP_NODE_PEERS ?? resolve(here, "../../../target/node-peers");
const require = createRequire(join(peers, "package.json"));
const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");
const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");

const [revision, kind, ...target] = process.argv.slice(2);
const transport =
  kind === "http"
    ? new StreamableHTTPClientTransport(new URL(target[0]))
    : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "ignore" });
const options = revision === "2025-11-25" ? {} : { versionNegotiation: { mode: { pin: revision } } };
const client = new Client({ name: "ts-v2-client", version: "1.0.0" }, options);
await client.connect(transport);

const calls = [];
for (const [name, args] of JSON.parse(process.env.BACKSTOP_CALLS ?? "[]")) {
  try {
    calls.push({ result: await client.callTool({ name, arguments: args }) });
  } catch (error) {
    calls.push({ thrown: { code: error.code, message: String(error.message), data: error.data } });
  }
}
process.stdout.write(JSON.stringify({ calls }) + "\n");
await client.close();
