//! Protocol revisions and the client's identity (SPEC R1–R3).
//!
//! The identity and revision come from the `initialize` handshake, or — in revisions
//! without one (2026-07-28) — from the request's own `_meta`.

use serde_json::{Map, Value};

/// A revision of the MCP specification (R1).
///
/// ```
/// use backstop_core::protocol::Revision;
/// assert_eq!(Revision::parse("2025-06-18"), Some(Revision::V2025_06_18));
/// assert_eq!(Revision::parse("1999-01-01"), None);
/// assert_eq!(Revision::parse_or_newest("1999-01-01"), Revision::NEWEST);
/// assert!(Revision::V2024_11_05 < Revision::V2026_07_28);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Revision {
    /// 2024-11-05.
    V2024_11_05,
    /// 2025-03-26.
    V2025_03_26,
    /// 2025-06-18.
    V2025_06_18,
    /// 2025-11-25.
    V2025_11_25,
    /// 2026-07-28: no handshake; identity and revision travel in each request's `_meta`.
    V2026_07_28,
}

/// The `_meta` key of a request that carries the client's identity (2026-07-28).
pub const CLIENT_INFO_META_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of a request that carries the protocol revision (2026-07-28).
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key under which a server of 2026-07-28 stamps its identity on its
/// results.
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

impl Revision {
    /// Every revision this library understands, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The newest revision understood: the behaviour for an unknown revision (R3).
    pub const NEWEST: Revision = Revision::V2026_07_28;

    /// The revision named by a `protocolVersion` string, if it is one of [`Self::ALL`].
    ///
    /// ```
    /// assert!(backstop_core::protocol::Revision::parse("2026-07-28").is_some());
    /// ```
    pub fn parse(version: &str) -> Option<Revision> {
        Self::ALL.into_iter().find(|r| r.as_str() == version)
    }

    /// The revision named, or [`Self::NEWEST`] for a name not understood (R3).
    ///
    /// ```
    /// use backstop_core::protocol::Revision;
    /// assert_eq!(Revision::parse_or_newest("2099-01-01"), Revision::V2026_07_28);
    /// ```
    pub fn parse_or_newest(version: &str) -> Revision {
        Self::parse(version).unwrap_or(Self::NEWEST)
    }

    /// The revision's `protocolVersion` string.
    ///
    /// ```
    /// assert_eq!(backstop_core::protocol::Revision::V2025_11_25.as_str(), "2025-11-25");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// The JSON-RPC code for "resource not found" in this revision (R3): `-32002` up to
    /// 2025-11-25, `-32602` from 2026-07-28.
    ///
    /// ```
    /// use backstop_core::protocol::Revision;
    /// assert_eq!(Revision::V2025_11_25.resource_not_found_code(), -32002);
    /// assert_eq!(Revision::V2026_07_28.resource_not_found_code(), -32602);
    /// ```
    pub fn resource_not_found_code(self) -> i64 {
        if self >= Revision::V2026_07_28 {
            -32602
        } else {
            -32002
        }
    }
}

impl Revision {
    /// Whether a result of this revision carries `resultType` (R4) — and the SDKs stamp
    /// the server's identity into its `_meta` — as results do from 2026-07-28 on.
    ///
    /// ```
    /// use backstop_core::protocol::Revision;
    /// assert!(Revision::V2026_07_28.results_carry_result_type());
    /// assert!(!Revision::V2025_11_25.results_carry_result_type());
    /// ```
    pub fn results_carry_result_type(self) -> bool {
        self >= Revision::V2026_07_28
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The client's `name` and `version`, as it gave them (`clientInfo`).
///
/// ```
/// let client = backstop_core::protocol::ClientInfo::new("probe-client", "9.9");
/// assert_eq!(client.to_string(), "probe-client 9.9");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientInfo {
    /// `clientInfo.name`.
    pub name: String,
    /// `clientInfo.version`.
    pub version: String,
}

impl ClientInfo {
    /// A client identity.
    ///
    /// ```
    /// assert_eq!(backstop_core::protocol::ClientInfo::new("c", "1").version, "1");
    /// ```
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
        }
    }

    /// Read a `clientInfo` object; `None` unless it has a string `name`. A missing or
    /// non-string `version` reads as empty.
    ///
    /// ```
    /// let info = serde_json::json!({"name": "gemini-cli", "version": "0.9"});
    /// let client = backstop_core::protocol::ClientInfo::from_value(&info).unwrap();
    /// assert_eq!(client.name, "gemini-cli");
    /// ```
    pub fn from_value(value: &Value) -> Option<ClientInfo> {
        let name = value.get("name")?.as_str()?;
        let version = value.get("version").and_then(Value::as_str).unwrap_or("");
        Some(ClientInfo::new(name, version))
    }
}

impl std::fmt::Display for ClientInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.version.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{} {}", self.name, self.version)
        }
    }
}

/// What is known of the session a request belongs to: the client and the revision.
///
/// ```
/// use backstop_core::protocol::{Revision, Session};
/// use serde_json::json;
///
/// // From the handshake …
/// let handshake = Session::from_initialize(
///     &json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "c", "version": "1"}}),
/// );
/// assert_eq!(handshake.revision, Some(Revision::V2025_11_25));
///
/// // … or, with none, from the request's _meta (2026-07-28).
/// let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
///                   "io.modelcontextprotocol/clientInfo": {"name": "d", "version": "2"}});
/// let session = Session::default().or_request_meta(meta.as_object());
/// assert_eq!(session.revision(), Revision::V2026_07_28);
/// assert_eq!(session.client.unwrap().name, "d");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Session {
    /// The client's identity, when known (R2).
    pub client: Option<ClientInfo>,
    /// The revision in force, when known (R3).
    pub revision: Option<Revision>,
}

impl Session {
    /// What an `initialize` request's (or result's) params say: `clientInfo` and
    /// `protocolVersion`. An unknown revision string reads as the newest (R3).
    ///
    /// ```
    /// let s = backstop_core::protocol::Session::from_initialize(&serde_json::json!({"protocolVersion": "2024-11-05"}));
    /// assert_eq!(s.revision(), backstop_core::protocol::Revision::V2024_11_05);
    /// assert!(s.client.is_none());
    /// ```
    pub fn from_initialize(params: &Value) -> Session {
        Session {
            client: params.get("clientInfo").and_then(ClientInfo::from_value),
            revision: params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(Revision::parse_or_newest),
        }
    }

    /// What a request's `_meta` says (2026-07-28 keys).
    ///
    /// ```
    /// let meta = serde_json::json!({"io.modelcontextprotocol/clientInfo": {"name": "x"}});
    /// let s = backstop_core::protocol::Session::from_request_meta(meta.as_object());
    /// assert_eq!(s.client.unwrap().name, "x");
    /// ```
    pub fn from_request_meta(meta: Option<&Map<String, Value>>) -> Session {
        let Some(meta) = meta else {
            return Session::default();
        };
        Session {
            client: meta
                .get(CLIENT_INFO_META_KEY)
                .and_then(ClientInfo::from_value),
            revision: meta
                .get(PROTOCOL_VERSION_META_KEY)
                .and_then(Value::as_str)
                .map(Revision::parse_or_newest),
        }
    }

    /// This session, with whatever it does not know filled in from a request's `_meta`:
    /// the handshake wins where it said something (R2, R3).
    ///
    /// ```
    /// use backstop_core::protocol::{Revision, Session};
    /// let handshake = Session { revision: Some(Revision::V2025_06_18), client: None };
    /// let meta = serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    /// assert_eq!(handshake.or_request_meta(meta.as_object()).revision(), Revision::V2025_06_18);
    /// ```
    pub fn or_request_meta(self, meta: Option<&Map<String, Value>>) -> Session {
        let request = Session::from_request_meta(meta);
        Session {
            client: self.client.or(request.client),
            revision: self.revision.or(request.revision),
        }
    }

    /// The revision in force: the known one, else the newest (R3).
    ///
    /// ```
    /// assert_eq!(backstop_core::protocol::Session::default().revision(), backstop_core::protocol::Revision::NEWEST);
    /// ```
    pub fn revision(&self) -> Revision {
        self.revision.unwrap_or(Revision::NEWEST)
    }
}
