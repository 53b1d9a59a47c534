//! What the tests share: the example server, and rmcp clients connected to a server
//! over an in-memory duplex.
#![allow(dead_code)]

#[path = "../../examples/support/scrollback_tools.rs"]
pub mod scrollback_tools;

pub mod big_output;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ListToolsResult,
    ProtocolVersion, ReadResourceRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServerHandler, ServiceExt,
};
use serde_json::{Value, json};

/// A client that names itself, so that V5 can name it.
#[derive(Debug, Clone)]
pub struct ProbeClient {
    pub version: ProtocolVersion,
    /// Whether it declares the tasks extension.
    pub tasks: bool,
}

impl ProbeClient {
    /// A client on `version`, without the tasks extension.
    pub fn new(version: ProtocolVersion) -> Self {
        Self {
            version,
            tasks: false,
        }
    }
}

impl ClientHandler for ProbeClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("probe-client", "9.9"))
            .with_protocol_version(self.version.clone())
    }
}

pub type Client = RunningService<RoleClient, ProbeClient>;

fn spawn_server<S: ServerHandler>(server: S) -> tokio::io::DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_io
}

/// A client on 2025-11-25, with the `initialize` handshake.
pub async fn connect<S: ServerHandler>(server: S) -> Client {
    connect_as(ProbeClient::new(ProtocolVersion::V_2025_11_25), server).await
}

/// This client on its revision's handshake.
pub async fn connect_as<S: ServerHandler>(client: ProbeClient, server: S) -> Client {
    client
        .serve(spawn_server(server))
        .await
        .expect("the client connects")
}

/// A client on 2026-07-28: no handshake; every request carries its `_meta`.
pub async fn connect_2026<S: ServerHandler>(server: S) -> Client {
    ProbeClient::new(ProtocolVersion::V_2026_07_28)
        .serve_with_lifecycle(
            spawn_server(server),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("the client connects with server/discover")
}

/// What the client received for a call, as JSON: `{"result": …}` or `{"error": …}`.
pub fn received<T: serde::Serialize>(outcome: Result<T, ServiceError>) -> Value {
    match outcome {
        Ok(result) => json!({"result": result}),
        Err(ServiceError::McpError(error)) => json!({"error": error}),
        Err(other) => panic!("not an answer: {other}"),
    }
}

/// Call `tool` with `arguments` and return what the client received.
pub async fn call(client: &Client, tool: &'static str, arguments: Value) -> Value {
    let mut request = CallToolRequestParams::new(tool);
    if let Some(arguments) = arguments.as_object() {
        request = request.with_arguments(arguments.clone());
    }
    received(client.call_tool(request).await)
}

/// Read `uri` and return what the client received.
pub async fn read(client: &Client, uri: &str) -> Value {
    received(
        client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await,
    )
}

/// The compact JSON size of a value.
pub fn wire_size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

/// The binary of this crate's example `name`, built (or found up to date) by cargo
/// first: a filtered test run (`--test …`) does not build the examples, and one
/// built before a change to the core would test the old core.
pub fn example_binary(name: &str) -> std::path::PathBuf {
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let deps = std::env::current_exe().expect("the test binary's path");
    let profile = deps
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let cargo_profile = match profile.file_name().and_then(|dir| dir.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "backstop-rmcp", "--example", name])
        .args(["--profile", cargo_profile])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the example {name} failed");
    profile.join("examples").join(file)
}

/// The config of a test server with tools and the tasks extension.
pub fn tools_and_tasks() -> ServerConfig {
    ServerConfig::new(
        ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build(),
    )
}

/// A listing of `tools` (name, description), each taking any object.
pub fn listing(tools: &[(&str, &str)]) -> ListToolsResult {
    let schema = json!({"type": "object", "properties": {}});
    let schema = schema.as_object().unwrap().clone();
    let tools = tools
        .iter()
        .map(|(name, description)| {
            Tool::new(name.to_string(), description.to_string(), schema.clone())
        })
        .collect();
    ListToolsResult::with_all_items(tools)
}
