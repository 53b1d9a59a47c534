// An MCP server on the official TypeScript SDK 2.x (`@modelcontextprotocol/server`
// from npm, which speaks MCP 2026-07-28 and serves 2025 clients statelessly), over
// Streamable HTTP on 127.0.0.1, or over stdio:
//
//     node typescript_v2_server.mjs http PORT
//     node typescript_v2_server.mjs stdio
//
// Its tools: `echo` (returns `text`), `big` (`lines` lines of output, then a prompt),
// `fail` (throws `message`), `regional` (its `region` declared `x-mcp-header: Region`,
// so the SDK requires an `Mcp-Param-Region` header that agrees with it). Over HTTP it
// is served with the SDK's own `createMcpHandler` (its
// web-standard `fetch` face, wrapped here in `node:http` without another package), so
// what it checks — the 2026-07-28 headers `Mcp-Method`, `Mcp-Name` and
// `MCP-Protocol-Version` against the body — is the SDK's, not ours; over stdio with
// its `serveStdio`, which serves both eras as the connection opens.
//
// The SDK is resolved from BACKSTOP_NODE_PEERS (default: target/node-peers of this
// checkout), where .ci/run installs tests/peers/package.json.

import http from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.BACKSTOP_NODE_PEERS ?? resolve(here, "../../../target/node-peers");
const require = createRequire(join(peers, "package.json"));
const { createMcpHandler, McpServer } = require("@modelcontextprotocol/server");
const z = require("zod");

const factory = () => {
  const server = new McpServer({ name: "ts-v2-probe", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "big",
    { description: "Many lines, then a prompt.", inputSchema: z.object({ lines: z.number() }) },
    async ({ lines }) => ({
      content: [{ type: "text", text: "line of output\n".repeat(lines) + "PROMPT $" }],
    }),
  );
  server.registerTool(
    "regional",
    {
      description: "Say the region, which SEP-2243 mirrors into the Mcp-Param-Region header.",
      inputSchema: z.object({ region: z.string().meta({ "x-mcp-header": "Region" }) }),
    },
    async ({ region }) => ({ content: [{ type: "text", text: `served in ${region}` }] }),
  );
  server.registerTool(
    "fail",
    { description: "Throw the message.", inputSchema: z.object({ message: z.string() }) },
    async ({ message }) => {
      throw new Error(message);
    },
  );
  return server;
};

const [kind, port] = process.argv.slice(2);
if (kind === "stdio") {
  const { serveStdio } = require("@modelcontextprotocol/server/stdio");
  serveStdio(factory);
} else {
  serveHttp(Number(port));
}

function serveHttp(port) {
  const handler = createMcpHandler(factory);
  http
    .createServer(async (req, res) => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      const hasBody = !["GET", "HEAD"].includes(req.method);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    })
    .listen(port, "127.0.0.1");
}
