//! The delegating `ServerHandler` methods of [`Backstop`](crate::Backstop), written
//! once (SPEC A1: every method other than `tools/call` is delegated unchanged, except
//! for the P-mapping of its errors, P1, P2, R3).
//!
//! Each macro expands, inside `impl ServerHandler for Backstop<S>`, to methods that
//! call the wrapped handler's method of the same name with the same arguments. The
//! methods that do more than that (`initialize`, `tools/call`, `tools/list`, …) stay
//! written out in [`wrapper`](crate::wrapper).

/// Requests whose errors are mapped: one line a method,
///
/// ```text
/// name(param: Params) -> Ok, "method/name";
/// name(param: Params) -> Ok, "method/name", uri = param.uri.clone();
/// name() -> Ok, "method/name";
/// ```
///
/// Each becomes `async fn name(&self, param: Params, context) -> Result<Ok, ErrorData>`
/// that reads the session from the request context (R2, R3), delegates, and maps an
/// error with [`Backstop::map_error`](crate::Backstop) under `"method/name"` — with the
/// request's URI when `uri = …` names it (P1's `data.uri`). Attributes written before
/// a line (`#[allow(deprecated)]`) are kept on its method.
macro_rules! delegate_requests {
    (@uri) => {
        ::std::option::Option::<::std::string::String>::None
    };
    (@uri $uri:expr) => {
        ::std::option::Option::<::std::string::String>::Some($uri)
    };
    ($(
        $(#[$attr:meta])*
        $name:ident($($request:ident: $params:ty)?) -> $ok:ty, $method:literal $(, uri = $uri:expr)?;
    )*) => {$(
        $(#[$attr])*
        async fn $name(
            &self,
            $($request: $params,)?
            context: ::rmcp::service::RequestContext<::rmcp::RoleServer>,
        ) -> ::std::result::Result<$ok, ::rmcp::ErrorData> {
            let session = $crate::convert::session_of(&context);
            let uri = $crate::delegate::delegate_requests!(@uri $($uri)?);
            self.inner
                .$name($($request,)? context)
                .await
                .map_err(|e| self.map_error(e, $method, &session, uri.as_deref()))
        }
    )*};
}

/// Notifications, which have no answer and so nothing to map: one line a method,
/// `name(param: Params);` or `name();`, each becoming
/// `async fn name(&self, param: Params, context: NotificationContext<RoleServer>)`.
macro_rules! delegate_notifications {
    ($( $name:ident($($param:ident: $params:ty)?); )*) => {$(
        async fn $name(
            &self,
            $($param: $params,)?
            context: ::rmcp::service::NotificationContext<::rmcp::RoleServer>,
        ) {
            self.inner.$name($($param,)? context).await
        }
    )*};
}

/// Plain methods, neither request nor notification (the server's description, a
/// tool by name, …): one line a method, `name(arg: Type, …) -> Return;`, each
/// becoming `fn name(&self, arg: Type, …) -> Return` that returns what the wrapped
/// handler returns.
macro_rules! delegate_plain {
    ($( $name:ident($($arg:ident: $args:ty),*) -> $ret:ty; )*) => {$(
        fn $name(&self $(, $arg: $args)*) -> $ret {
            self.inner.$name($($arg),*)
        }
    )*};
}

pub(crate) use {delegate_notifications, delegate_plain, delegate_requests};
