// Drive an MCP server on stdio with the official TypeScript client
// (`@modelcontextprotocol/sdk` from npm).
//
//     node typescript_client.mjs CALLS -- SERVER_COMMAND [ARG...]
//
// CALLS is a JSON array of `{"name": ..., "arguments": {...}}`. The client starts the
// server (with this process's environment), connects, lists the tools, and makes each
// call with `Client.callTool` — which validates a result against the tool's advertised
// `outputSchema`. It prints one JSON object on stdout:
//
//     {"client": "@modelcontextprotocol/sdk <version>", "tools": [<tool>...],
//      "calls": [{"result": <CallToolResult>} | {"error": "<ErrorType>: <message>"}...]}
//
// The SDK is resolved from BACKSTOP_NODE_PEERS (default: target/node-peers of this
// checkout), where .ci/run installs tests/peers/package.json.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.BACKSTOP_NODE_PEERS ?? resolve(here, "../../../target/node-peers");
const require = createRequire(join(peers, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const sdkVersion = JSON.parse(
  readFileSync(join(peers, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
).version;

const args = process.argv.slice(2);
if (args.length < 3 || args[1] !== "--") {
  console.error("usage: node typescript_client.mjs CALLS -- SERVER_COMMAND [ARG...]");
  process.exit(2);
}
const calls = JSON.parse(args[0]);
const [command, ...commandArgs] = args.slice(2);

const transport = new StdioClientTransport({
  command,
  args: commandArgs,
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "backstop-typescript-client", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const answers = [];
for (const call of calls) {
  try {
    const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    answers.push({ result });
  } catch (error) {
    answers.push({ error: `${error?.constructor?.name ?? "Error"}: ${error?.message ?? error}` });
  }
}
await client.close();
console.log(JSON.stringify({ client: `@modelcontextprotocol/sdk ${sdkVersion}`, tools, calls: answers }));
