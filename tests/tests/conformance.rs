//! The conformance vectors (`vectors.json`) run through the core directly, through the
//! rmcp adapter (an rmcp client ↔ a wrapped rmcp server, in process) and through the
//! JSON-RPC shaper: all three must send the client the same JSON, which is pinned by
//! an insta snapshot per vector. `README.md` lists the rules each vector covers.

use std::time::Instant;

use backstop_core::call::shape_request_error;
use backstop_core::{
    Failure, Limit, ProtocolError, ToolResult,
    call::{ArgumentShapes, Family},
    limit::Keep,
    protocol::{ClientInfo, Revision, Session},
};
use backstop_core::{ToolCatalog, call::Outcome, shape_tool_call};
use backstop_jsonrpc::{Forward, Shaper};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ErrorCode, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{ClientHandler, ClientLifecycleMode, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// One vector: a tool, a call, what the server's tool produced, and the setting.
#[derive(Debug, Clone)]
struct Vector {
    name: String,
    tool: Value,
    call: String,
    arguments: Map<String, Value>,
    client: ClientInfo,
    revision: Revision,
    cap: usize,
    /// The keep policy (L16): `tail` unless the vector says.
    keep: Keep,
    method: String,
    uri: Option<String>,
    /// What the server sends for the request: a JSON-RPC error or a result.
    outcome: Result<Value, ProtocolError>,
}

impl Vector {
    /// The vector's limit: its cap and keep policy (what an adapter configures).
    fn limit(&self) -> Limit {
        Limit::new(self.cap).unwrap().with_keep(self.keep)
    }

    /// The limit for the vector's client, as the session machine applies it (L18,
    /// E12): the core's own path takes it so.
    fn limit_for_client(&self) -> Limit {
        self.limit().for_client(Some(&self.client))
    }
}

fn vectors() -> Vec<Vector> {
    let all: Vec<Value> = serde_json::from_str(include_str!("../vectors.json")).unwrap();
    all.into_iter().map(vector).collect()
}

fn vector(v: Value) -> Vector {
    let outcome = if let Some(result) = v["outcome"].get("result") {
        Ok(result.clone())
    } else if let Some(error) = v["outcome"].get("error") {
        Err(serde_json::from_value(error.clone()).unwrap())
    } else {
        Err(ProtocolError::encode_failure(&failure(
            &v["outcome"]["failure"],
        )))
    };
    Vector {
        name: v["name"].as_str().unwrap().to_owned(),
        tool: v["tool"].clone(),
        call: v["call"].as_str().unwrap().to_owned(),
        arguments: v["arguments"].as_object().cloned().unwrap_or_default(),
        client: ClientInfo::from_value(&v["client"]).unwrap(),
        revision: Revision::parse(v["revision"].as_str().unwrap()).unwrap(),
        cap: v["cap"].as_u64().unwrap() as usize,
        keep: v
            .get("keep")
            .and_then(Value::as_str)
            .map_or(Keep::Tail, |keep| keep.parse().unwrap()),
        method: v
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("tools/call")
            .to_owned(),
        uri: v.get("uri").and_then(Value::as_str).map(str::to_owned),
        outcome,
    }
}

/// A failure as a tool author builds it with the core's API.
fn failure(f: &Value) -> Failure {
    let message = f["message"].as_str().unwrap();
    let mut failure = if f["expected"] == true {
        Failure::expected(message)
    } else {
        Failure::unexpected(message)
    };
    if let Some(t) = f.get("error_type").and_then(Value::as_str) {
        failure = failure.with_error_type(t);
    }
    if let Some(s) = f.get("suggestion").and_then(Value::as_str) {
        failure = failure.with_suggestion(s);
    }
    if let Some(family) = f
        .get("family")
        .and_then(Value::as_str)
        .and_then(Family::parse)
    {
        failure = failure.with_family(family);
    }
    for (k, value) in f
        .get("meta")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        failure = failure.with_meta(k.clone(), value.clone());
    }
    failure
}

/// What the client is sent, as canonical JSON (keys sorted): `{"result": …}` or
/// `{"error": …}`.
fn canonical(value: &Value) -> String {
    let value: Value = serde_json::from_str(&value.to_string()).unwrap();
    serde_json::to_string(&value).unwrap()
}

// ---- the core, directly -------------------------------------------------------------

fn through_core(v: &Vector) -> String {
    let limit = v.limit_for_client();
    if v.method != "tools/call" {
        let session = Session {
            client: Some(v.client.clone()),
            revision: Some(v.revision),
        };
        let error = v.outcome.clone().unwrap_err();
        let shaped = shape_request_error(&error, &v.method, &session, v.uri.as_deref());
        return canonical(&json!({ "error": shaped.error }));
    }
    let catalog = ToolCatalog::from_tools_list(&json!({ "tools": [v.tool] }));
    let call = catalog
        .context(&v.call)
        .with_arguments(v.arguments.keys().cloned())
        .with_argument_shapes(ArgumentShapes::of(&v.arguments))
        .with_client(v.client.clone())
        .with_revision(v.revision);
    let outcome = match &v.outcome {
        Ok(result) => Outcome::Result(ToolResult::from_value(result.clone()).unwrap()),
        Err(error) => Outcome::Failure(Failure::from_protocol_error(error)),
    };
    match shape_tool_call(&catalog, &call, outcome, &limit).response {
        Ok(result) => canonical(&json!({ "result": result })),
        Err(error) => canonical(&json!({ "error": error })),
    }
}

// ---- the JSON-RPC shaper --------------------------------------------------------------

fn through_shaper(v: &Vector) -> String {
    let mut shaper = Shaper::new(v.limit());
    let client_info = json!({"name": v.client.name, "version": v.client.version});
    let handshake = v.revision < Revision::V2026_07_28;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": v.revision.as_str(),
        "io.modelcontextprotocol/clientInfo": client_info,
    });
    let mut exchange = |request: Value, response: Value| -> Value {
        shaper.client_value(Instant::now(), &request);
        let bytes = serde_json::to_vec(&response).unwrap();
        match shaper.server_message(Instant::now(), &bytes) {
            Forward::Unchanged => response,
            Forward::Rewritten(out) => serde_json::from_slice(&out).unwrap(),
        }
    };
    let with_meta = |mut params: Value| {
        if !handshake {
            params["_meta"] = meta.clone();
        }
        params
    };
    if handshake {
        exchange(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": v.revision.as_str(), "capabilities": {}, "clientInfo": client_info}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": v.revision.as_str(),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "vectors", "version": "1"}}}),
        );
    }
    exchange(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": with_meta(json!({}))}),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [v.tool]}}),
    );
    let params = if v.method == "tools/call" {
        json!({"name": v.call, "arguments": v.arguments})
    } else {
        json!({"uri": v.uri})
    };
    let answer = match &v.outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": 3, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": 3, "error": error}),
    };
    let sent = exchange(
        json!({"jsonrpc": "2.0", "id": 3, "method": v.method, "params": with_meta(params)}),
        answer,
    );
    match sent.get("result") {
        Some(result) => canonical(&json!({ "result": result })),
        None => canonical(&json!({ "error": sent["error"] })),
    }
}

// ---- the rmcp adapter ---------------------------------------------------------------

/// An rmcp server whose one tool (and resource) answers what the vector says.
#[derive(Clone)]
struct VectorServer(Vector);

fn error_data(error: &ProtocolError) -> ErrorData {
    ErrorData::new(
        ErrorCode(error.code as i32),
        error.message.clone(),
        error.data.clone(),
    )
}

impl ServerHandler for VectorServer {
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(serde_json::from_value(json!({ "tools": [self.0.tool] })).unwrap())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match &self.0.outcome {
            Ok(result) => Ok(serde_json::from_value::<CallToolResult>(result.clone())
                .unwrap()
                .into()),
            Err(error) => Err(error_data(error)),
        }
    }

    async fn read_resource(
        &self,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Err(error_data(self.0.outcome.as_ref().unwrap_err()))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
    }
}

#[derive(Clone)]
struct VectorClient(Vector);

impl ClientHandler for VectorClient {
    fn get_info(&self) -> ClientConfig {
        let version = match self.0.revision {
            Revision::V2026_07_28 => ProtocolVersion::V_2026_07_28,
            _ => ProtocolVersion::V_2025_11_25,
        };
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(self.0.client.name.clone(), self.0.client.version.clone()),
        )
        .with_protocol_version(version)
    }
}

async fn through_rmcp(v: &Vector) -> String {
    let server = backstop_rmcp::Backstop::new(VectorServer(v.clone())).with_limit(v.limit());
    let (server_io, client_io) = tokio::io::duplex(1 << 22);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = VectorClient(v.clone());
    let client = if v.revision >= Revision::V2026_07_28 {
        let mode = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        rmcp::ClientServiceExt::serve_with_lifecycle(client, client_io, mode)
            .await
            .unwrap()
    } else {
        client.serve(client_io).await.unwrap()
    };
    let received = if v.method == "tools/call" {
        let request =
            CallToolRequestParams::new(v.call.clone()).with_arguments(v.arguments.clone());
        client
            .call_tool(request)
            .await
            .map(|r| serde_json::to_value(r).unwrap())
    } else {
        let request = ReadResourceRequestParams::new(v.uri.clone().unwrap());
        client
            .read_resource(request)
            .await
            .map(|r| serde_json::to_value(r).unwrap())
    };
    let _ = client.cancel().await;
    match received {
        Ok(result) => canonical(&json!({ "result": result })),
        Err(ServiceError::McpError(error)) => canonical(&json!({ "error": error })),
        Err(other) => panic!("{}: not an answer: {other}", v.name),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_vector_gives_the_same_bytes_through_the_core_rmcp_and_the_shaper() {
    let mut differences = Vec::new();
    for v in vectors() {
        let core = through_core(&v);
        let shaper = through_shaper(&v);
        let rmcp = through_rmcp(&v).await;
        if shaper != core {
            differences.push(format!("{}: shaper\n  {shaper}\ncore\n  {core}", v.name));
        }
        if rmcp != core {
            differences.push(format!("{}: rmcp\n  {rmcp}\ncore\n  {core}", v.name));
        }
        insta::assert_snapshot!(v.name.clone(), core);
    }
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
}
