//! One `tools/call` through [`Backstop`]: collect what the core needs, run the inner
//! handler, hand the outcome to [`shape_tool_call`] (a result: to
//! [`shape_tool_call_texts`]), send what it decided.
//!
//! - The call's context: the tool's parameters from the inner handler's `tools/list`,
//!   the argument names of the request, the client from the session (R2).
//! - An unknown tool is answered with E8 without running the inner handler.
//! - Strict mode (V6) rejects unnamed arguments before the inner handler runs.
//! - An inner `Err` is read with `Failure::from_protocol_error` (a [`ToolError`] comes
//!   back without loss); a complete result goes to the core as what its JSON says,
//!   its plain texts borrowed where rmcp holds them ([`shape_tool_call_texts`]: a
//!   100 MB text is never copied whole, B2, L13);
//!   input-required and task results pass untouched (L1); a cancelled call passes
//!   untouched (E9).
//! - A result the core leaves unchanged is sent as the inner handler built it.
//!
//! [`ToolError`]: crate::ToolError

use backstop_core::Failure;
use backstop_core::call::{Outcome, check_arguments, shape_tool_call, shape_tool_call_texts};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::convert::{
    session_of, to_call_tool_result, to_error_data, to_protocol_error, to_tool_result_texts,
};
use crate::wrapper::Backstop;

impl<S: ServerHandler> Backstop<S> {
    pub(crate) async fn shape_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let session =
            session_of(&context).or_request_meta(request.meta.as_ref().map(|meta| &meta.0.0));
        let catalog = self
            .catalog
            .for_call(&request.name, self.inner(), &context)
            .await;
        if let Err(unknown) = catalog.check(&request.name) {
            return Err(to_error_data(unknown));
        }
        let call = catalog
            .context(&request.name)
            .with_arguments(request.arguments.iter().flat_map(|a| a.keys().cloned()))
            .with_client(session.client)
            .with_revision(session.revision);

        let rejected = if self.strict {
            check_arguments(&call)
        } else {
            None
        };
        let (shaped, built) = match rejected {
            Some(failure) => {
                let outcome = Outcome::Failure(failure);
                (shape_tool_call(&catalog, &call, outcome, &self.limit), None)
            }
            None => {
                let cancelled = context.ct.clone();
                let response = self.inner().call_tool(request, context).await;
                if cancelled.is_cancelled() {
                    return response; // E9
                }
                match response {
                    Ok(CallToolResponse::Complete(result)) => {
                        // The texts stay where rmcp holds them (B2, L13).
                        let shaped = to_tool_result_texts(&result).map(|(shell, texts)| {
                            let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
                            shape_tool_call_texts(&catalog, &call, shell, &texts, &self.limit)
                        });
                        match shaped {
                            Some(shaped) => (shaped, Some(result)),
                            None => return Ok(result.into()),
                        }
                    }
                    // Input-required and task results are not complete: untouched (L1).
                    Ok(other) => return Ok(other),
                    Err(error) => {
                        let failure = Failure::from_protocol_error(&to_protocol_error(&error));
                        let outcome = Outcome::Failure(failure);
                        (shape_tool_call(&catalog, &call, outcome, &self.limit), None)
                    }
                }
            }
        };

        if let Some(record) = &shaped.log {
            self.reporter.failure(record);
        }
        if let Some(truncation) = &shaped.truncation {
            self.reporter.truncation(&call.tool, truncation);
        }
        let unchanged = shaped.log.is_none() && shaped.truncation.is_none();
        match (shaped.response, built) {
            (Ok(_), Some(built)) if unchanged => Ok(built.into()),
            (Ok(result), _) => Ok(CallToolResponse::Complete(to_call_tool_result(result))),
            (Err(error), _) => Err(to_error_data(error)),
        }
    }
}
