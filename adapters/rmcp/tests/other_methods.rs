//! Every method other than `tools/call`: delegated unchanged, errors mapped by family
//! with the revision's resource-not-found code (P1, P2, R3).

mod support;

use backstop_rmcp::Backstop;
use rmcp::model::GetPromptRequestParams;
use support::scrollback_tools::ScrollbackTools;
use support::{connect, connect_2026, read, received};

fn wrapped() -> Backstop<ScrollbackTools> {
    Backstop::new(ScrollbackTools::new())
}

#[tokio::test]
async fn p1_r3_a_missing_resource_on_2025_11_25_is_32002() {
    let client = connect(wrapped()).await;
    let received = read(&client, "sessions://missing").await;
    insta::assert_json_snapshot!(received);
    assert_eq!(received["error"]["code"], -32002);
    assert_eq!(
        received["error"]["message"],
        "Resource not found: Session not found: missing"
    );
    assert_eq!(received["error"]["data"]["uri"], "sessions://missing");
}

#[tokio::test]
async fn p1_r3_a_missing_resource_on_2026_07_28_is_32602() {
    let client = connect_2026(wrapped()).await;
    let received = read(&client, "sessions://missing").await;
    insta::assert_json_snapshot!(received);
    assert_eq!(received["error"]["code"], -32602);
    assert_eq!(
        received["error"]["message"],
        "Resource not found: Session not found: missing"
    );
}

#[tokio::test]
async fn a_present_resource_is_delegated_unchanged() {
    let client = connect(wrapped()).await;
    let received = read(&client, "sessions://main").await;
    insta::assert_json_snapshot!(received);
    assert_eq!(received["result"]["contents"][0]["text"], "session main");
}

#[tokio::test]
async fn p2_a_plain_protocol_error_passes_unchanged() {
    // The example server has no prompts: rmcp's own -32601 passes as it was.
    let wrapped_client = connect(wrapped()).await;
    let bare_client = connect(ScrollbackTools::new()).await;
    let request = || GetPromptRequestParams::new("nothing");
    let through = received(wrapped_client.get_prompt(request()).await);
    let bare = received(bare_client.get_prompt(request()).await);
    assert_eq!(through, bare);
    assert_eq!(through["error"]["code"], -32601);
}

#[tokio::test]
async fn g3_non_tool_failures_are_counted_by_method() {
    let server = wrapped();
    let counts = server.failure_counts();
    let client = connect(server).await;
    let _ = read(&client, "sessions://missing").await;
    let _ = read(&client, "sessions://missing").await;
    assert_eq!(counts.get("ExpectedToolError:resources/read"), 2);
    // The plain -32601 of get_prompt was not converted: not counted.
    let _ = client.get_prompt(GetPromptRequestParams::new("x")).await;
    assert_eq!(counts.snapshot().total(), 2);
}

/// A server whose prompts fail in each family.
#[derive(Clone)]
struct FailingPrompts;

impl rmcp::ServerHandler for FailingPrompts {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_prompts()
                .build(),
        )
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, rmcp::ErrorData> {
        use backstop_core::call::Family;
        let error = backstop_rmcp::ToolError::expected(format!("{} failed", request.name));
        let family = match request.name.as_str() {
            "not_found" => Family::NotFound,
            "permission" => Family::Permission,
            "timeout" => Family::Timeout,
            "invalid" => Family::InvalidParams,
            "plain" => return Err(rmcp::ErrorData::internal_error("Internal error: raw", None)),
            _ => Family::Internal,
        };
        Err(error
            .with_family(family)
            .with_suggestion("Call prompts/list.")
            .into())
    }
}

#[tokio::test]
async fn p1_other_methods_map_by_family() {
    let client = connect(Backstop::new(FailingPrompts)).await;
    let mut codes = Vec::new();
    for name in ["not_found", "permission", "timeout", "invalid", "internal"] {
        let received = received(client.get_prompt(GetPromptRequestParams::new(name)).await);
        assert_eq!(
            received["error"]["message"],
            format!("{name} failed"),
            "as written"
        );
        assert_eq!(
            received["error"]["data"]["suggestion"],
            "Call prompts/list."
        );
        codes.push(received["error"]["code"].clone());
    }
    assert_eq!(
        codes,
        [-32001, -32000, -32000, -32602, -32603].map(serde_json::Value::from)
    );
    // P2: a plain protocol error keeps its message, prefix and all.
    let plain = received(
        client
            .get_prompt(GetPromptRequestParams::new("plain"))
            .await,
    );
    assert_eq!(plain["error"]["message"], "Internal error: raw");
    assert_eq!(plain["error"]["code"], -32603);
}
