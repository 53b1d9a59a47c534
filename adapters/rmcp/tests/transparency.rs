//! A wrapped server answers every non-failing, under-cap request exactly as the
//! unwrapped one (SPEC A1, L2).

mod support;

use backstop_rmcp::Backstop;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};
use support::scrollback_tools::ScrollbackTools;
use support::{Client, call, connect, connect_2026, received};

async fn answers(client: &Client) -> Vec<Value> {
    let mut all = vec![
        json!({"server": client.peer_info()}),
        received(client.list_tools(None).await),
        received(client.list_resource_templates(None).await),
        received(
            client
                .read_resource(ReadResourceRequestParams::new("sessions://main"))
                .await,
        ),
    ];
    for (tool, arguments) in [
        ("scrollback", json!({"lines": 0})),
        ("scrollback", json!({"lines": 2_000})),
        ("takes_int", json!({"count": -5})),
        ("takes_int", json!({"count": i64::MAX})),
    ] {
        all.push(call(client, tool, arguments).await);
    }
    all
}

#[tokio::test]
async fn on_2025_11_25_every_answer_is_the_same() {
    let bare = answers(&connect(ScrollbackTools::new()).await).await;
    let wrapped = answers(&connect(Backstop::new(ScrollbackTools::new()).strict(true)).await).await;
    assert_eq!(bare.len(), wrapped.len());
    for (bare, wrapped) in bare.iter().zip(&wrapped) {
        assert_eq!(bare, wrapped);
    }
}

#[tokio::test]
async fn on_2026_07_28_every_answer_is_the_same() {
    let bare = answers(&connect_2026(ScrollbackTools::new()).await).await;
    let wrapped = answers(&connect_2026(Backstop::new(ScrollbackTools::new())).await).await;
    for (bare, wrapped) in bare.iter().zip(&wrapped) {
        assert_eq!(bare, wrapped);
    }
}
