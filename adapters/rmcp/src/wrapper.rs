//! [`Backstop`]: the `ServerHandler` that wraps another one (SPEC A1, O1–O3).
//!
//! `tools/call` is shaped by the core (see [`tool_call`](crate::tool_call)), and so is
//! the state of a task a call created ([`task_state`](crate::task_state)); every other
//! method is delegated unchanged, and only its errors are mapped (P1, P2, R3).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use backstop_core::call::shape_request_error;
use backstop_core::machine::Response;
use backstop_core::{
    Limit,
    call::LogRecord,
    protocol::{ClientInfo, Revision, Session},
};
use rmcp::model::*;
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::convert::{session_of, to_error_data, to_protocol_error};
use crate::delegate::{delegate_notifications, delegate_plain, delegate_requests};
use crate::report::{FailureCounts, Reporter};
use crate::session::SharedMachine;

/// Any rmcp `ServerHandler`, with backstop in front of it: tool failures become
/// readable `isError` results (E, V), oversized results keep their tail under a hard
/// cap (L), errors of other methods are mapped by family (P).
///
/// The order is fixed (O1–O3): the limiter outside, conversion inside it, and the
/// wrapped handler — with its own audit, access-control or retry layers — inside
/// both, so those layers still see a failure as a failure.
///
/// Two lines of setup:
///
/// ```no_run
/// # use rmcp::{ServerHandler, ServiceExt};
/// # #[derive(Clone)] struct MyServer;
/// # impl ServerHandler for MyServer {}
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = backstop_rmcp::Backstop::new(MyServer);
/// server.serve(rmcp::transport::stdio()).await?.waiting().await?;
/// # Ok(()) }
/// ```
///
/// The tools' names and input schemas (for E8, V4, V6) come from the wrapped
/// handler's `tools/list`: read on the first call, kept, read again when a call names
/// a tool the kept list lacks, and replaced whenever the client lists the tools
/// (as clients do after `notifications/tools/list_changed`).
///
/// Options, all optional: [`with_limit`](Self::with_limit) (cap and tool set),
/// [`with_keep`](Self::with_keep) and [`keep_for`](Self::keep_for) (which end of an
/// over-long result is kept, L16),
/// [`strict`](Self::strict) (reject arguments the schema does not name, V6), and
/// [`on_failure`](Self::on_failure) (a callback per converted failure, G3).
///
/// ```
/// use backstop_core::Limit;
/// use backstop_rmcp::Backstop;
/// # #[derive(Clone)] struct MyServer;
/// # impl rmcp::ServerHandler for MyServer {}
/// let server = Backstop::new(MyServer)
///     .with_limit(Limit::new(200_000).unwrap().only_tools(["capture_pane"]))
///     .strict(true)
///     .on_failure(|record| eprintln!("{}: {}", record.count_key(), record.message));
/// assert_eq!(server.limit().max_bytes(), 200_000);
/// ```
pub struct Backstop<S> {
    inner: S,
    pub(crate) limit: Limit,
    pub(crate) strict: bool,
    pub(crate) reporter: Reporter,
    pub(crate) machine: SharedMachine,
}

impl<S: Clone> Clone for Backstop<S> {
    /// A copy that shares the failure counts and callback, and the tasks the calls
    /// created, with a session machine of its own (its own tool catalog and pending
    /// requests): rmcp clones the wrapper for each session, or each stateless request.
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            limit: self.limit.clone(),
            strict: self.strict,
            reporter: self.reporter.clone(),
            machine: self.machine.sharing_tasks(&self.limit, self.strict),
        }
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for Backstop<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backstop")
            .field("inner", &self.inner)
            .field("limit", &self.limit)
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

impl<S> Backstop<S> {
    /// Wrap `inner` with the defaults: a 1,000,000-byte cap for every tool
    /// (L2), strict mode off, no callback.
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// let server = backstop_rmcp::Backstop::new(MyServer);
    /// assert_eq!(server.limit().max_bytes(), 1_000_000);
    /// assert!(!server.is_strict());
    /// ```
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            limit: Limit::default(),
            strict: false,
            reporter: Reporter::default(),
            machine: SharedMachine::new(&Limit::default(), false),
        }
    }

    /// This wrapper with a new session machine for its current settings.
    fn with_machine(mut self) -> Self {
        self.machine = SharedMachine::new(&self.limit, self.strict);
        self
    }

    /// Use this response limit: its cap, its tool set, its line alignment (L1–L14).
    /// A [`Limit`] too small to work cannot be built (L14).
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// let limit = backstop_core::Limit::new(50_000).unwrap();
    /// let server = backstop_rmcp::Backstop::new(MyServer).with_limit(limit);
    /// assert_eq!(server.limit().max_bytes(), 50_000);
    /// ```
    pub fn with_limit(mut self, limit: Limit) -> Self {
        self.limit = limit;
        self.with_machine()
    }

    /// Keep `keep` of over-long results of every tool without a policy of its own
    /// (L16): [`Keep::Tail`](backstop_core::limit::Keep::Tail) (the default) for logs and
    /// scrollback, whose end matters; [`Keep::Head`](backstop_core::limit::Keep::Head) for
    /// newest-first listings, search results and pages, whose start matters;
    /// [`Keep::HeadAndTail`](backstop_core::limit::Keep::HeadAndTail) for both (a page's title
    /// and its pagination hint). Set after [`with_limit`](Self::with_limit), which
    /// replaces the whole limit.
    ///
    /// ```
    /// use backstop_core::limit::Keep;
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// let server = backstop_rmcp::Backstop::new(MyServer)
    ///     .with_keep(Keep::HeadAndTail { head_per_mille: 200 })
    ///     .keep_for("git_log", Keep::Head);
    /// assert_eq!(server.limit().keep_of("git_log"), Keep::Head);
    /// assert_eq!(server.limit().keep_of("fetch"), Keep::HeadAndTail { head_per_mille: 200 });
    /// ```
    pub fn with_keep(mut self, keep: backstop_core::limit::Keep) -> Self {
        self.limit = self.limit.with_keep(keep);
        self.with_machine()
    }

    /// Keep `keep` of over-long results of `tool` (L16), whatever the default; see
    /// [`with_keep`](Self::with_keep).
    pub fn keep_for(mut self, tool: impl Into<String>, keep: backstop_core::limit::Keep) -> Self {
        self.limit = self.limit.keep_for(tool, keep);
        self.with_machine()
    }

    /// Strict mode (V6, off by default): a call that gives an argument the tool's
    /// input schema does not name is rejected before the tool runs.
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// assert!(backstop_rmcp::Backstop::new(MyServer).strict(true).is_strict());
    /// ```
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self.with_machine()
    }

    /// Call `callback` with the record of each converted failure (G3). A callback
    /// that panics is logged and otherwise ignored: the client's answer is not
    /// affected.
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// let server = backstop_rmcp::Backstop::new(MyServer)
    ///     .on_failure(|record| tracing::info!(key = %record.count_key(), "tool failed"));
    /// # let _ = server;
    /// ```
    pub fn on_failure(mut self, callback: impl Fn(&LogRecord) + Send + Sync + 'static) -> Self {
        self.reporter.callback = Some(Arc::new(callback));
        self
    }

    /// The response limit in force.
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// assert!(backstop_rmcp::Backstop::new(MyServer).limit().applies_to("any_tool"));
    /// ```
    pub fn limit(&self) -> &Limit {
        &self.limit
    }

    /// Whether strict mode is on.
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// assert!(!backstop_rmcp::Backstop::new(MyServer).is_strict());
    /// ```
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// A handle on the failure counts per `<error_type>:<method>` (G3), shared with
    /// this server: readable after the server moved into `serve`.
    ///
    /// ```
    /// # #[derive(Clone)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// let server = backstop_rmcp::Backstop::new(MyServer);
    /// let counts = server.failure_counts();
    /// assert_eq!(counts.snapshot().total(), 0);
    /// ```
    pub fn failure_counts(&self) -> FailureCounts {
        self.reporter.counts.clone()
    }

    /// The wrapped handler.
    ///
    /// ```
    /// # #[derive(Clone, Debug, PartialEq)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// assert_eq!(backstop_rmcp::Backstop::new(MyServer).inner(), &MyServer);
    /// ```
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The wrapped handler, by value.
    ///
    /// ```
    /// # #[derive(Clone, Debug, PartialEq)] struct MyServer;
    /// # impl rmcp::ServerHandler for MyServer {}
    /// assert_eq!(backstop_rmcp::Backstop::new(MyServer).into_inner(), MyServer);
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Map the error of a request of `method` (not a tool call) and report it when it
    /// was converted (P1, P2, R3, G1).
    pub(crate) fn map_error(
        &self,
        error: ErrorData,
        method: &str,
        session: &Session,
        uri: Option<&str>,
    ) -> ErrorData {
        let shaped = shape_request_error(&to_protocol_error(&error), method, session, uri);
        if let Some(record) = &shaped.log {
            self.reporter.failure(record);
        }
        to_error_data(shaped.error)
    }
}

/// Wrap any `ServerHandler` in [`Backstop`] with `.backstop()`.
///
/// ```
/// use backstop_rmcp::BackstopExt;
/// # #[derive(Clone)] struct MyServer;
/// # impl rmcp::ServerHandler for MyServer {}
/// let server = MyServer.backstop().strict(true);
/// assert!(server.is_strict());
/// ```
pub trait BackstopExt: ServerHandler {
    /// This handler, wrapped with the defaults ([`Backstop::new`]).
    fn backstop(self) -> Backstop<Self> {
        Backstop::new(self)
    }
}

impl<S: ServerHandler> BackstopExt for S {}

/// The revision a request of `initialize` asks for.
fn initialize_session(request: &InitializeRequestParams) -> Session {
    Session {
        client: Some(ClientInfo::new(
            request.client_info.name.clone(),
            request.client_info.version.clone(),
        )),
        revision: Some(Revision::parse_or_newest(request.protocol_version.as_str())),
    }
}

impl<S: ServerHandler> ServerHandler for Backstop<S> {
    delegate_requests! {
        ping() -> (), "ping";
        discover() -> DiscoverResult, "server/discover";
        complete(request: CompleteRequestParams) -> CompleteResult, "completion/complete";
        #[allow(deprecated)]
        set_level(request: SetLevelRequestParams) -> (), "logging/setLevel";
        get_prompt(request: GetPromptRequestParams) -> GetPromptResponse, "prompts/get";
        list_prompts(request: Option<PaginatedRequestParams>) -> ListPromptsResult, "prompts/list";
        list_resources(request: Option<PaginatedRequestParams>) -> ListResourcesResult,
            "resources/list";
        list_resource_templates(request: Option<PaginatedRequestParams>)
            -> ListResourceTemplatesResult, "resources/templates/list";
        read_resource(request: ReadResourceRequestParams) -> ReadResourceResponse,
            "resources/read", uri = request.uri.clone();
        #[allow(deprecated)]
        subscribe(request: SubscribeRequestParams) -> (),
            "resources/subscribe", uri = request.uri.clone();
        #[allow(deprecated)]
        unsubscribe(request: UnsubscribeRequestParams) -> (),
            "resources/unsubscribe", uri = request.uri.clone();
        update_task(request: UpdateTaskParams) -> (), "tasks/update";
        cancel_task(request: CancelTaskParams) -> (), "tasks/cancel";
        list_skills(request: Option<PaginatedRequestParams>) -> ListSkillsResult, "skills/list";
        get_skill(request: GetSkillRequestParams) -> GetSkillResult,
            "skills/get", uri = request.uri.clone();
        read_resource_directory(request: ReadResourceDirectoryRequestParams)
            -> ReadResourceDirectoryResult, "resources/directory/read", uri = request.uri.clone();
    }

    delegate_notifications! {
        on_cancelled(notification: CancelledNotificationParam);
        on_progress(notification: ProgressNotificationParam);
        on_initialized();
        on_roots_list_changed();
        on_custom_notification(notification: CustomNotification);
    }

    delegate_plain! {
        supported_protocol_versions() -> Cow<'static, [ProtocolVersion]>;
        accepted_subscription_filter(requested: &SubscriptionFilter) -> Option<SubscriptionFilter>;
        get_tool(name: &str) -> Option<Tool>;
        get_info() -> ServerConfig;
    }

    // The methods that do more than delegate: the session of `initialize` comes from
    // its request (R2), `listen` has its own context, the method of a custom request
    // is the request's own, tools are listed (the catalog) and called (E, V, L), and a
    // task's state carries a call's outcome (L1, E11).

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let session = initialize_session(&request);
        self.inner
            .initialize(request, context)
            .await
            .map_err(|e| self.map_error(e, "initialize", &session, None))
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner
            .negotiate_initialize(request)
            .map_err(|e| self.map_error(e, "initialize", &initialize_session(request), None))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let session = session_of(context.request_context());
        self.inner
            .listen(context)
            .await
            .map_err(|e| self.map_error(e, "subscriptions/listen", &session, None))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let session = session_of(&context);
        let method = request.method.clone();
        self.inner
            .on_custom_request(request, context)
            .await
            .map_err(|e| self.map_error(e, &method, &session, None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.shape_call(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.shape_task_state(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let session = session_of(&context);
        // The client's listing teaches the machine's catalog too (R5).
        let mut listing = self.machine.client_request(&context, "tools/list");
        listing.cursor = request.as_ref().is_some_and(|r| r.cursor.is_some());
        let id = listing.id.clone();
        self.machine
            .lock()
            .client_request(listing, false, Instant::now());
        let response = self.inner.list_tools(request, context).await;
        let page = match &response {
            Ok(result) => serde_json::to_value(result).map_or(Response::Unread, Response::Result),
            Err(_) => Response::Unread,
        };
        self.machine
            .lock()
            .server_response(&id, page, Instant::now());
        response.map_err(|e| self.map_error(e, "tools/list", &session, None))
    }
}
