// An MCP server on the official TypeScript SDK 1.x (`@modelcontextprotocol/sdk` from
// npm) that implements what the official conformance suite
// (`@modelcontextprotocol/conformance`) asks of a server: its `test_*` tools, the
// `test://` resources and resource template, the `test_*` prompts, completion, logging,
// progress, and sampling and elicitation requests sent back to the client.
//
//     node conformance_server.mjs PORT
//
// It serves session-ful Streamable HTTP on http://127.0.0.1:PORT/mcp (protocol
// 2025-11-25 and 2025-06-18, and whatever older versions the SDK still accepts). Each
// session has the SDK's in-memory event store, so POST streams open with a priming
// event (`id:` and `retry:`) and are resumable with `Last-Event-ID`; the tool
// `test_reconnection` closes its own stream before answering (SEP-1699). The SDK does
// both only for requests whose MCP-Protocol-Version header is 2025-11-25 or later; the
// suite's `server-sse-polling` sends 2025-03-26 there, so that scenario gets its answer
// on the open stream and passes with two warnings (no priming event, no retry field).
// The app is the SDK's `createMcpExpressApp`, whose Host header validation answers 403
// to anything but localhost, 127.0.0.1 and [::1] (DNS rebinding protection).
//
// It uses the SDK's low-level `Server` rather than `McpServer`, so that every tool
// schema, resource and prompt below is written exactly as it goes on the wire: the
// suite checks literal JSON Schema 2020-12 keywords (`$schema`, `$defs`) that
// `McpServer`, deriving schemas from zod, would not emit.
//
// The SDK is resolved from BACKSTOP_NODE_PEERS (default: target/node-peers of this
// checkout), where .ci/run installs tests/peers/package.json.

import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.BACKSTOP_NODE_PEERS ?? resolve(here, "../../../target/node-peers");
const require = createRequire(join(peers, "package.json"));
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { createMcpExpressApp } = require("@modelcontextprotocol/sdk/server/express.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { InMemoryEventStore } = require("@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js");
const {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  isInitializeRequest,
} = require("@modelcontextprotocol/sdk/types.js");

// A 1x1 red PNG and a WAV of eight samples of silence (8 kHz, mono, 8-bit PCM).
const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const SILENT_WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

// MCP's "resource not found" error code (the SDK's ErrorCode has no name for it).
const RESOURCE_NOT_FOUND = -32002;

// Log levels from least to most severe; `logging/setLevel` drops those below its level.
const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const text = (value) => ({ type: "text", text: value });
const noArguments = { type: "object", properties: {} };

const requireString = (args, name) => {
  if (typeof args[name] !== "string") throw new Error(`argument "${name}" must be a string`);
  return args[name];
};

const elicitationSummary = (result) => ({
  content: [text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)],
});

// ---------------------------------------------------------------------------------
// Tools. `run(args, ctx)` returns a CallToolResult; what it throws becomes a result
// with `isError: true`. `ctx` (see `toolContext`) talks back to the client.
// ---------------------------------------------------------------------------------

const TOOLS = {
  test_simple_text: {
    description: "Returns a simple text response.",
    inputSchema: noArguments,
    run: async () => ({ content: [text("This is a simple text response for testing.")] }),
  },
  test_image_content: {
    description: "Returns a 1x1 red PNG image.",
    inputSchema: noArguments,
    run: async () => ({ content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }] }),
  },
  test_audio_content: {
    description: "Returns a short silent WAV clip.",
    inputSchema: noArguments,
    run: async () => ({ content: [{ type: "audio", data: SILENT_WAV, mimeType: "audio/wav" }] }),
  },
  test_embedded_resource: {
    description: "Returns an embedded text resource.",
    inputSchema: noArguments,
    run: async () => ({
      content: [
        {
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        },
      ],
    }),
  },
  test_multiple_content_types: {
    description: "Returns text, an image and an embedded resource together.",
    inputSchema: noArguments,
    run: async () => ({
      content: [
        text("Multiple content types test:"),
        { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: JSON.stringify({ test: "data", value: 123 }),
          },
        },
      ],
    }),
  },
  test_tool_with_logging: {
    description: "Sends three info log messages, 50 ms apart, while it runs.",
    inputSchema: noArguments,
    run: async (_args, ctx) => {
      await ctx.log("info", "Tool execution started");
      await sleep(50);
      await ctx.log("info", "Tool processing data");
      await sleep(50);
      await ctx.log("info", "Tool execution completed");
      return { content: [text("Tool with logging executed successfully")] };
    },
  },
  test_error_handling: {
    description: "Always fails.",
    inputSchema: noArguments,
    run: async () => {
      throw new Error("This tool intentionally returns an error for testing");
    },
  },
  test_tool_with_progress: {
    description: "Reports progress 0, 50 and 100 of 100, 50 ms apart.",
    inputSchema: noArguments,
    run: async (_args, ctx) => {
      await ctx.progress(0, 100);
      await sleep(50);
      await ctx.progress(50, 100);
      await sleep(50);
      await ctx.progress(100, 100);
      return { content: [text("Tool with progress executed successfully")] };
    },
  },
  test_sampling: {
    description: "Asks the client's LLM (sampling/createMessage) to answer the prompt.",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } },
      required: ["prompt"],
    },
    run: async (args, ctx) => {
      const result = await ctx.sample({
        messages: [{ role: "user", content: text(requireString(args, "prompt")) }],
        maxTokens: 100,
      });
      const answer = result.content.type === "text" ? result.content.text : JSON.stringify(result.content);
      return { content: [text(`LLM response: ${answer}`)] };
    },
  },
  test_elicitation: {
    description: "Asks the user (elicitation/create) for a username and an email address.",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "The message to show the user" } },
      required: ["message"],
    },
    run: async (args, ctx) => {
      const result = await ctx.elicit({
        message: requireString(args, "message"),
        requestedSchema: {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        },
      });
      return {
        content: [text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)],
      };
    },
  },
  test_elicitation_sep1034_defaults: {
    description: "Elicits a form whose every primitive field has a default value (SEP-1034).",
    inputSchema: noArguments,
    run: async (_args, ctx) =>
      elicitationSummary(
        await ctx.elicit({
          message: "Please review your details; every field has a default.",
          requestedSchema: {
            type: "object",
            properties: {
              name: { type: "string", description: "User name", default: "John Doe" },
              age: { type: "integer", description: "User age", default: 30 },
              score: { type: "number", description: "User score", default: 95.5 },
              status: {
                type: "string",
                description: "User status",
                enum: ["active", "inactive", "pending"],
                default: "active",
              },
              verified: { type: "boolean", description: "Verification status", default: true },
            },
            required: [],
          },
        }),
      ),
  },
  test_elicitation_sep1330_enums: {
    description: "Elicits a form with each of the five enum schema variants (SEP-1330).",
    inputSchema: noArguments,
    run: async (_args, ctx) =>
      elicitationSummary(
        await ctx.elicit({
          message: "Please pick some options.",
          requestedSchema: {
            type: "object",
            properties: {
              untitledSingle: {
                type: "string",
                description: "Untitled single-select",
                enum: ["option1", "option2", "option3"],
              },
              titledSingle: {
                type: "string",
                description: "Titled single-select",
                oneOf: [
                  { const: "value1", title: "First Option" },
                  { const: "value2", title: "Second Option" },
                  { const: "value3", title: "Third Option" },
                ],
              },
              legacyEnum: {
                type: "string",
                description: "Legacy titled single-select (enumNames, deprecated)",
                enum: ["opt1", "opt2", "opt3"],
                enumNames: ["Option One", "Option Two", "Option Three"],
              },
              untitledMulti: {
                type: "array",
                description: "Untitled multi-select",
                items: { type: "string", enum: ["option1", "option2", "option3"] },
              },
              titledMulti: {
                type: "array",
                description: "Titled multi-select",
                items: {
                  anyOf: [
                    { const: "value1", title: "First Choice" },
                    { const: "value2", title: "Second Choice" },
                    { const: "value3", title: "Third Choice" },
                  ],
                },
              },
            },
            required: [],
          },
        }),
      ),
  },
  json_schema_2020_12_tool: {
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: {
        name: { type: "string" },
        address: { $ref: "#/$defs/address" },
      },
      additionalProperties: false,
    },
    run: async (args) => ({ content: [text(`Received: ${JSON.stringify(args)}`)] }),
  },
  test_reconnection: {
    description: "Closes its own SSE stream, then answers; the client resumes with Last-Event-ID.",
    inputSchema: noArguments,
    run: async (_args, ctx) => {
      ctx.closeStream();
      await sleep(100);
      return { content: [text("Reconnection test completed successfully")] };
    },
  },
};

// ---------------------------------------------------------------------------------
// Resources: three fixed ones and the template test://template/{id}/data. None ever
// changes, so a subscription never yields notifications/resources/updated.
// ---------------------------------------------------------------------------------

const RESOURCES = {
  "test://static-text": {
    name: "static-text",
    description: "A static text resource",
    mimeType: "text/plain",
    text: "This is the content of the static text resource.",
  },
  "test://static-binary": {
    name: "static-binary",
    description: "A static binary resource (a 1x1 red PNG)",
    mimeType: "image/png",
    blob: RED_PIXEL_PNG,
  },
  "test://watched-resource": {
    name: "watched-resource",
    description: "A resource clients may subscribe to",
    mimeType: "text/plain",
    text: "This is the content of the watched resource.",
  },
};

const TEMPLATE = {
  uriTemplate: "test://template/{id}/data",
  name: "template-data",
  description: "JSON data for the given id",
  mimeType: "application/json",
};
const TEMPLATE_URI = /^test:\/\/template\/([^/]+)\/data$/;

const readResource = (uri) => {
  const fixed = RESOURCES[uri];
  if (fixed) {
    const { mimeType, text, blob } = fixed;
    return text !== undefined ? { uri, mimeType, text } : { uri, mimeType, blob };
  }
  const [, id] = uri.match(TEMPLATE_URI) ?? [];
  if (id !== undefined) {
    const data = { id, templateTest: true, data: `Data for ID: ${id}` };
    return { uri, mimeType: TEMPLATE.mimeType, text: JSON.stringify(data) };
  }
  throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
};

// ---------------------------------------------------------------------------------
// Prompts. `get(args)` returns the messages; the SDK has already checked that the
// arguments are strings, and `prompts/get` checks the required ones are present.
// ---------------------------------------------------------------------------------

const PROMPTS = {
  test_simple_prompt: {
    description: "A simple prompt without arguments",
    arguments: [],
    get: () => [{ role: "user", content: text("This is a simple prompt for testing.") }],
  },
  test_prompt_with_arguments: {
    description: "A prompt with two required arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
    get: ({ arg1, arg2 }) => [
      { role: "user", content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) },
    ],
  },
  test_prompt_with_embedded_resource: {
    description: "A prompt embedding the resource named by its argument",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    get: ({ resourceUri }) => [
      {
        role: "user",
        content: {
          type: "resource",
          resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
        },
      },
      { role: "user", content: text("Please process the embedded resource above.") },
    ],
  },
  test_prompt_with_image: {
    description: "A prompt with an image",
    arguments: [],
    get: () => [
      { role: "user", content: { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" } },
      { role: "user", content: text("Please analyze the image above.") },
    ],
  },
};

// Completion candidates by reference (`ref/prompt` name or `ref/resource` URI template)
// and argument name; `completion/complete` offers those that start with the typed value.
const COMPLETIONS = {
  "ref/prompt test_prompt_with_arguments": {
    arg1: ["paris", "park", "party"],
    arg2: ["hello", "help", "world"],
  },
  [`ref/resource ${TEMPLATE.uriTemplate}`]: { id: ["1", "2", "3", "123"] },
};

// ---------------------------------------------------------------------------------
// One `Server` per session: its handlers, and the per-session logging level.
// ---------------------------------------------------------------------------------

const newServer = () => {
  const server = new Server(
    { name: "backstop-conformance-server", version: "1.0.0" },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        completions: {},
        logging: {},
      },
    },
  );

  // The SDK keeps its own level for `sendLoggingMessage`, but that sends on the GET
  // stream; tools log on their own request's stream, so the level is kept here.
  let logLevel = "debug";
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    logLevel = request.params.level;
    return {};
  });

  // What a tool may do towards the client while it runs, on its request's stream.
  const toolContext = (extra) => {
    const clientCan = (capability) => {
      if (!server.getClientCapabilities()?.[capability]) {
        throw new Error(`the client does not support ${capability}`);
      }
    };
    return {
      log: async (level, data) => {
        if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(logLevel)) return;
        await extra.sendNotification({ method: "notifications/message", params: { level, data } });
      },
      progress: async (progress, total) => {
        const progressToken = extra._meta?.progressToken;
        if (progressToken === undefined) return;
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total } });
      },
      sample: async (params) => {
        clientCan("sampling");
        return extra.sendRequest({ method: "sampling/createMessage", params }, CreateMessageResultSchema);
      },
      elicit: async (params) => {
        clientCan("elicitation");
        return extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema);
      },
      // Absent unless the stream is resumable (event store, and protocol >= 2025-11-25).
      closeStream: () => extra.closeSSEStream?.(),
    };
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: Object.entries(TOOLS).map(([name, { description, inputSchema }]) => ({ name, description, inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const tool = TOOLS[name];
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    try {
      return await tool.run(args, toolContext(extra));
    } catch (error) {
      return { isError: true, content: [text(error instanceof Error ? error.message : String(error))] };
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: Object.entries(RESOURCES).map(([uri, { name, description, mimeType }]) => ({
      uri,
      name,
      description,
      mimeType,
    })),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [TEMPLATE] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
    contents: [readResource(request.params.uri)],
  }));
  // Subscribing to a resource that exists succeeds; see RESOURCES on notifications.
  const subscription = async (request) => {
    readResource(request.params.uri);
    return {};
  };
  server.setRequestHandler(SubscribeRequestSchema, subscription);
  server.setRequestHandler(UnsubscribeRequestSchema, subscription);

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: Object.entries(PROMPTS).map(([name, { description, arguments: args }]) => ({
      name,
      description,
      arguments: args,
    })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const { name, arguments: args = {} } = request.params;
    const prompt = PROMPTS[name];
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    const missing = prompt.arguments.filter((arg) => arg.required && args[arg.name] === undefined);
    if (missing.length > 0) {
      throw new McpError(ErrorCode.InvalidParams, `Missing arguments: ${missing.map((arg) => arg.name).join(", ")}`);
    }
    return { description: prompt.description, messages: prompt.get(args) };
  });

  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    const candidates = COMPLETIONS[`${ref.type} ${ref.name ?? ref.uri}`]?.[argument.name] ?? [];
    const values = candidates.filter((value) => value.startsWith(argument.value));
    return { completion: { values, total: values.length, hasMore: false } };
  });

  return server;
};

// ---------------------------------------------------------------------------------
// HTTP: POST, GET and DELETE on /mcp; an `initialize` without a session id opens a
// session (its own transport, event store and Server), anything else names one.
// ---------------------------------------------------------------------------------

const sessions = new Map();
const jsonRpcError = (res, status, code, message) =>
  res.status(status).json({ jsonrpc: "2.0", id: null, error: { code, message } });

const app = createMcpExpressApp({ host: "127.0.0.1" });
app.all("/mcp", async (req, res) => {
  const sessionId = req.headers["mcp-session-id"];
  let transport = sessionId === undefined ? undefined : sessions.get(sessionId);
  if (!transport) {
    if (sessionId !== undefined) return jsonRpcError(res, 404, -32001, "Session not found");
    if (req.method !== "POST" || !isInitializeRequest(req.body)) {
      return jsonRpcError(res, 400, -32000, "Bad Request: no session; send initialize first");
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new InMemoryEventStore(),
      retryInterval: 500,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

const [port] = process.argv.slice(2);
app.listen(Number(port), "127.0.0.1");
