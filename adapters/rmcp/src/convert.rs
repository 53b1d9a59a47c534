//! Translations between rmcp's types and backstop-core's: error objects, tool results,
//! and what a request says of its session. No decisions are made here.

use std::borrow::Cow;

use backstop_core::{
    ProtocolError, ToolResult,
    call::Content,
    protocol::{ClientInfo, Revision, Session},
};
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

/// An rmcp tool result as the core's, its texts apart: a shell whose text blocks are
/// empty, and the texts of those blocks in order, as
/// [`shape_tool_call_texts`](backstop_core::call::shape_tool_call_texts) takes them
/// (the shell with the texts put in is what the result's JSON says). Plain text
/// blocks' texts are borrowed, not copied (SPEC B2, L13); every other block goes
/// through its JSON. `None` if a block cannot be written as JSON (rmcp's blocks
/// always can).
pub(crate) fn to_tool_result_texts(
    result: &CallToolResult,
) -> Option<(ToolResult, Vec<Cow<'_, str>>)> {
    let mut texts = Vec::new();
    let mut content = Vec::with_capacity(result.content.len());
    for block in &result.content {
        content.push(match block {
            ContentBlock::Text(text) if text.meta.is_none() && text.annotations.is_none() => {
                texts.push(Cow::Borrowed(text.text.as_str()));
                Content::text(String::new())
            }
            other => {
                let mut converted = Content::from_value(serde_json::to_value(other).ok()?);
                if let Content::Text(block) = &mut converted {
                    texts.push(Cow::Owned(std::mem::take(&mut block.text)));
                }
                converted
            }
        });
    }
    let shell = ToolResult {
        content,
        structured_content: result.structured_content.clone(),
        is_error: result.is_error,
        meta: result.meta.as_ref().map(|meta| meta.0.clone()),
        result_type: result.result_type.as_ref().map(|t| t.as_str().to_owned()),
        extra: serde_json::Map::new(),
    };
    Some((shell, texts))
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

    /// The direct translation says what the JSON says.
    #[test]
    fn results_translate_as_their_json() {
        let mut with_meta = CallToolResult::success(vec![
            ContentBlock::text("plain"),
            ContentBlock::image("AA==", "image/png"),
            ContentBlock::embedded_text("sessions://x", "inside"),
        ]);
        with_meta.meta = Some(rmcp::model::MetaObject(
            json!({"k": [1, 2]}).as_object().unwrap().clone(),
        ));
        with_meta.structured_content = Some(json!({"n": 1}));
        let mut annotated = rmcp::model::TextContent::new("noted");
        annotated.meta = Some(rmcp::model::MetaObject(
            json!({"m": true}).as_object().unwrap().clone(),
        ));
        let mut error = CallToolResult::error(vec![ContentBlock::Text(annotated)]);
        error.result_type = None;
        for result in [with_meta, error, CallToolResult::success(vec![])] {
            let through_json =
                ToolResult::from_value(serde_json::to_value(&result).unwrap()).unwrap();
            let (shell, texts) = to_tool_result_texts(&result).unwrap();
            assert!(
                shell
                    .content
                    .iter()
                    .all(|b| b.as_text().is_none_or(str::is_empty))
            );
            let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
            assert_eq!(shell.with_texts(&texts), through_json, "{result:?}");
        }
    }

    /// B2, L13: a plain text block's text is the one rmcp holds, not a copy.
    #[test]
    fn plain_texts_are_borrowed() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("x".repeat(1000)),
            ContentBlock::image("AA==", "image/png"),
        ]);
        let (shell, texts) = to_tool_result_texts(&result).unwrap();
        let Some(ContentBlock::Text(held)) = result.content.first() else {
            unreachable!()
        };
        assert!(matches!(&texts[..], [Cow::Borrowed(t)] if std::ptr::eq(*t, held.text.as_str())));
        assert_eq!(shell.content[0].as_text(), Some(""));
    }

    #[test]
    fn results_round_trip() {
        let mut result = CallToolResult::error(vec![ContentBlock::text("boom")]);
        result.meta = Some(rmcp::model::MetaObject(
            json!({"k": 1}).as_object().unwrap().clone(),
        ));
        let (shell, texts) = to_tool_result_texts(&result).unwrap();
        let core = shell.with_texts(&[&texts[0]]);
        assert!(core.is_error());
        assert_eq!(core.content[0].as_text(), Some("boom"));
        assert_eq!(to_call_tool_result(core), result);
    }
}
