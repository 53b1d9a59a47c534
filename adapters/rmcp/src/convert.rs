//! Translations between rmcp's types and backstop-core's: error objects, tool results,
//! and what a request says of its session. No decisions are made here.

use std::borrow::Cow;

use backstop_core::{ClientInfo, ProtocolError, Revision, Session, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, RequestMetaObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

/// An rmcp error object as the core's JSON-RPC error object.
pub(crate) fn to_protocol_error(error: &ErrorData) -> ProtocolError {
    ProtocolError {
        code: i64::from(error.code.0),
        message: error.message.to_string(),
        data: error.data.clone(),
    }
}

/// The core's JSON-RPC error object as an rmcp error object. A code outside `i32`
/// (none the core makes) becomes `-32603`.
pub(crate) fn to_error_data(error: ProtocolError) -> ErrorData {
    let code = i32::try_from(error.code).unwrap_or(ErrorCode::INTERNAL_ERROR.0);
    ErrorData::new(ErrorCode(code), Cow::Owned(error.message), error.data)
}

/// An rmcp tool result as the core's, through its JSON. `None` if it cannot be read
/// (rmcp's serializer never writes such JSON).
pub(crate) fn to_tool_result(result: &CallToolResult) -> Option<ToolResult> {
    let value = serde_json::to_value(result).ok()?;
    ToolResult::from_value(value).ok()
}

/// The core's tool result as an rmcp one, through its JSON. Should rmcp refuse it
/// (it never does for what the core makes), the text is kept in a plain result with
/// the same `isError`, rather than failing the call.
pub(crate) fn to_call_tool_result(result: ToolResult) -> CallToolResult {
    let is_error = result.is_error;
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(str::to_owned))
        .collect();
    match serde_json::from_value::<CallToolResult>(result.into_value()) {
        Ok(converted) => converted,
        Err(_) => {
            let content = text.into_iter().map(ContentBlock::text).collect();
            let mut fallback = CallToolResult::success(content);
            fallback.is_error = is_error;
            fallback
        }
    }
}

/// The session a request belongs to: the client and revision from the `initialize`
/// handshake, else from the request's `_meta` (R2, R3; 2026-07-28 has no handshake).
pub(crate) fn session_of(context: &RequestContext<RoleServer>) -> Session {
    let handshake = match context.peer.peer_info() {
        Some(info) => Session {
            client: Some(ClientInfo::new(
                info.client_info.name.clone(),
                info.client_info.version.clone(),
            )),
            revision: Some(Revision::parse_or_newest(info.protocol_version.as_str())),
        },
        None => Session::default(),
    };
    handshake.or_request_meta(Some(meta_map(&context.meta)))
}

/// The JSON object of a request's `_meta`.
fn meta_map(meta: &RequestMetaObject) -> &serde_json::Map<String, serde_json::Value> {
    &meta.0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_round_trip() {
        let error = ErrorData::new(
            ErrorCode(-32002),
            "Resource not found: x",
            Some(json!({"uri": "x"})),
        );
        let core = to_protocol_error(&error);
        assert_eq!(core.code, -32002);
        assert_eq!(to_error_data(core), error);
        let wide = ProtocolError::new(i64::MAX, "m");
        assert_eq!(to_error_data(wide).code, ErrorCode::INTERNAL_ERROR);
    }

    #[test]
    fn results_round_trip() {
        let mut result = CallToolResult::error(vec![ContentBlock::text("boom")]);
        result.meta = Some(rmcp::model::MetaObject(
            json!({"k": 1}).as_object().unwrap().clone(),
        ));
        let core = to_tool_result(&result).unwrap();
        assert!(core.is_error());
        assert_eq!(core.content[0].as_text(), Some("boom"));
        assert_eq!(to_call_tool_result(core), result);
    }
}
