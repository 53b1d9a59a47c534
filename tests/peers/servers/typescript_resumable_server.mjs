// An MCP server on the official TypeScript SDK 1.x (`@modelcontextprotocol/sdk` from
// npm) whose streams are resumable (SEP-1699, MCP 2025-11-25): session-ful Streamable
// HTTP on 127.0.0.1 with the SDK's own in-memory event store, so each POST stream opens
// with a priming event (`id:` and `retry: 200`), and a tool may close its stream before
// it answers — the client is to resume with a GET carrying `Last-Event-ID`.
//
//     node typescript_resumable_server.mjs PORT
//
// Its tool `poll_later` closes its own stream at once (the SDK's `closeSSEStream`),
// waits `wait_ms` (default 300), then returns `lines` lines of output and a prompt —
// or throws `fail` when given. `echo` returns `text` without closing anything.
//
// The SDK is resolved from BACKSTOP_NODE_PEERS (default: target/node-peers of this
// checkout), where .ci/run installs tests/peers/package.json.

import http from "node:http";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.BACKSTOP_NODE_PEERS ?? resolve(here, "../../../target/node-peers");
const require = createRequire(join(peers, "package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { InMemoryEventStore } = require("@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const z = require("zod");

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

const newServer = () => {
  const server = new McpServer({ name: "ts-resumable-probe", version: "1.0.0" });
  server.registerTool(
    "poll_later",
    {
      description: "Close the stream, then answer: lines of output and a prompt, or throw.",
      inputSchema: { lines: z.number(), wait_ms: z.number().optional(), fail: z.string().optional() },
    },
    async ({ lines, wait_ms, fail }, extra) => {
      extra.closeSSEStream?.();
      await sleep(wait_ms ?? 300);
      if (fail !== undefined) throw new Error(fail);
      return { content: [{ type: "text", text: "line of output\n".repeat(lines) + "PROMPT $" }] };
    },
  );
  server.registerTool(
    "echo",
    { description: "Echo the text.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
};

const eventStore = new InMemoryEventStore();
const sessions = new Map();

const [port] = process.argv.slice(2);
http
  .createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id || !isInitializeRequest(body)) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore,
        retryInterval: 200,
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  })
  .listen(Number(port), "127.0.0.1");
