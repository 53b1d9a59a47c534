//! Which requests `backstop gateway` serves, judged by their `Host` and `Origin`
//! headers before anything else (SPEC A5): the gateway's defence against DNS
//! rebinding, which the MCP transport asks of every Streamable HTTP server.
//!
//! A page on `http://evil.example` whose name the attacker re-points at 127.0.0.1
//! reaches a loopback gateway with `Host: evil.example` and, from a browser,
//! `Origin: http://evil.example`. The gateway replaces `Host` with the upstream's,
//! so the upstream's own check cannot see it: the check is made here, by [`check`].
//!
//! - `Host`: one of `--allowed-hosts` when given; listening on a loopback address, a
//!   loopback name (`localhost`, `127.0.0.1` and the rest of 127.0.0.0/8, `[::1]`) is
//!   always served; listening elsewhere with no list, any `Host` is (put the names
//!   the gateway is reached by in the list). A missing or unreadable `Host` is refused
//!   whenever a check applies.
//! - `Origin`: a request without one (not from a browser) is served; else one of
//!   `--allowed-origins`, or, listening on a loopback address, an `http`/`https`
//!   origin of a loopback name; listening elsewhere with no list, any.
//! - A name given without `:port` matches every port; `*` allows anything.
//!
//! A refused request gets `403` and a JSON-RPC error ([`refusal_body`]) naming the
//! header; the value is shown only when short and printable, never at length.

use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use http::HeaderMap;
use http::header::{HOST, ORIGIN};

/// The most bytes of a refused header's value a refusal repeats.
const SHOWN_VALUE: usize = 64;

/// One allowed `Host` or `Origin`, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// `*`: any value.
    Any,
    /// A name or address, with a scheme (origins) and a port when given.
    Site(Site<'static>),
}

/// A host (lowercase; an IPv6 address in brackets), the scheme an origin has and the
/// port when one was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site<'a> {
    scheme: Option<Cow<'a, str>>,
    host: Cow<'a, str>,
    port: Option<u16>,
}

impl Site<'_> {
    /// Whether the host is a loopback name: `localhost`, 127.0.0.0/8 or `[::1]`.
    fn is_loopback(&self) -> bool {
        if self.host == "localhost" {
            return true;
        }
        if let Some(inside) = self.host.strip_prefix('[') {
            return inside
                .trim_end_matches(']')
                .parse::<Ipv6Addr>()
                .is_ok_and(|address| address.is_loopback());
        }
        self.host
            .parse::<Ipv4Addr>()
            .is_ok_and(|address| address.is_loopback())
    }

    /// This site, owning its text (an allowed one, kept).
    fn into_owned(self) -> Site<'static> {
        Site {
            scheme: self.scheme.map(|scheme| Cow::Owned(scheme.into_owned())),
            host: Cow::Owned(self.host.into_owned()),
            port: self.port,
        }
    }

    /// Whether this site, as a request named it, is allowed by `pattern`.
    fn matches(&self, pattern: &Pattern) -> bool {
        match pattern {
            Pattern::Any => true,
            Pattern::Site(allowed) => {
                allowed.scheme == self.scheme
                    && allowed.host == self.host
                    && (allowed.port.is_none() || allowed.port == self.port)
            }
        }
    }
}

/// The `Host` and `Origin` values the gateway serves beside its defaults (an empty
/// list keeps the default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    /// `--allowed-hosts`.
    pub hosts: Vec<Pattern>,
    /// `--allowed-origins`.
    pub origins: Vec<Pattern>,
}

/// The header a request was refused for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `Host` (missing, unreadable or not allowed).
    Host,
    /// `Origin` (not allowed, or unreadable).
    Origin,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Host => "Host",
            Self::Origin => "Origin",
        })
    }
}

/// Whether a gateway listening on `listen` serves a request with these `Host` and
/// `Origin` values (`None`: the header is absent). The rules are the module's.
///
/// ```
/// use backstop::http::origin_guard::{check, Allowed, Refused, parse_allowed_host};
/// let loopback = "127.0.0.1".parse().unwrap();
/// let none = Allowed::default();
/// assert_eq!(check(loopback, &none, Some(b"localhost:8808"), None), Ok(()));
/// assert_eq!(check(loopback, &none, Some(b"evil.example:8808"), None), Err(Refused::Host));
/// assert_eq!(
///     check(loopback, &none, Some(b"127.0.0.1:8808"), Some(b"http://evil.example")),
///     Err(Refused::Origin)
/// );
/// let named = Allowed { hosts: vec![parse_allowed_host("mcp.example.com").unwrap()], origins: vec![] };
/// assert_eq!(check("0.0.0.0".parse().unwrap(), &named, Some(b"mcp.example.com"), None), Ok(()));
/// ```
pub fn check(
    listen: IpAddr,
    allowed: &Allowed,
    host: Option<&[u8]>,
    origin: Option<&[u8]>,
) -> Result<(), Refused> {
    let on_loopback = listen.to_canonical().is_loopback();
    let host_checked = on_loopback || !allowed.hosts.is_empty();
    if host_checked && !allowed.hosts.contains(&Pattern::Any) {
        let site = host.and_then(|value| site(None, std::str::from_utf8(value).ok()?));
        let served = site.is_some_and(|site| {
            (on_loopback && site.is_loopback())
                || allowed.hosts.iter().any(|pattern| site.matches(pattern))
        });
        if !served {
            return Err(Refused::Host);
        }
    }
    let origin_checked = on_loopback || !allowed.origins.is_empty();
    if let Some(origin) = origin
        && origin_checked
        && !allowed.origins.contains(&Pattern::Any)
    {
        let site = std::str::from_utf8(origin).ok().and_then(origin_site);
        let served = site.is_some_and(|site| {
            let web = matches!(site.scheme.as_deref(), Some("http" | "https"));
            (on_loopback && web && site.is_loopback())
                || allowed.origins.iter().any(|pattern| site.matches(pattern))
        });
        if !served {
            return Err(Refused::Origin);
        }
    }
    Ok(())
}

/// [`check`] on a request's headers; a request with two `Host` or two `Origin`
/// headers is refused whenever a check applies to that header.
///
/// ```
/// use backstop::http::origin_guard::{check_headers, Allowed, Refused};
/// let mut headers = http::HeaderMap::new();
/// headers.insert("host", http::HeaderValue::from_static("evil.example"));
/// let loopback = "::1".parse().unwrap();
/// assert_eq!(check_headers(loopback, &Allowed::default(), &headers), Err(Refused::Host));
/// ```
pub fn check_headers(
    listen: IpAddr,
    allowed: &Allowed,
    headers: &HeaderMap,
) -> Result<(), Refused> {
    // A second value stands for one no check could pass: an empty one.
    let single = |name| {
        let mut values = headers.get_all(name).iter();
        let first = values.next().map(|value| value.as_bytes());
        if values.next().is_some() {
            Some(&b""[..])
        } else {
            first
        }
    };
    check(listen, allowed, single(HOST), single(ORIGIN))
}

/// An `--allowed-hosts` entry: `*`, or a name or address with or without `:port`
/// (`mcp.example.com`, `10.0.0.5:8808`, `[fd00::5]`).
///
/// ```
/// use backstop::http::origin_guard::parse_allowed_host;
/// assert!(parse_allowed_host("mcp.example.com:8808").is_ok());
/// assert!(parse_allowed_host("http://mcp.example.com").is_err());
/// ```
pub fn parse_allowed_host(text: &str) -> Result<Pattern, String> {
    let text = text.trim();
    if text == "*" {
        return Ok(Pattern::Any);
    }
    site(None, text)
        .map(Site::into_owned)
        .map(Pattern::Site)
        .ok_or_else(|| {
            "an allowed host is a name or address, with `:port` or without (`mcp.example.com`, \
         `10.0.0.5:8808`, `[::1]`), or `*`"
                .to_owned()
        })
}

/// An `--allowed-origins` entry: `*`, or `scheme://host` with or without `:port`
/// (`https://app.example.com`, `http://localhost:6274`).
///
/// ```
/// use backstop::http::origin_guard::parse_allowed_origin;
/// assert!(parse_allowed_origin("https://app.example.com").is_ok());
/// assert!(parse_allowed_origin("app.example.com").is_err());
/// ```
pub fn parse_allowed_origin(text: &str) -> Result<Pattern, String> {
    let text = text.trim();
    if text == "*" {
        return Ok(Pattern::Any);
    }
    origin_site(text)
        .map(Site::into_owned)
        .map(Pattern::Site)
        .ok_or_else(|| {
            "an allowed origin is `scheme://host` with `:port` or without \
         (`https://app.example.com`, `http://localhost:6274`), or `*`"
                .to_owned()
        })
}

/// The body of the `403` a refused request gets: a JSON-RPC error without an id,
/// naming the header and repeating its value only when it is short and printable.
///
/// ```
/// use backstop::http::origin_guard::{refusal_body, Refused};
/// let body = refusal_body(Refused::Host, Some(b"evil.example:1234"));
/// let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(error["id"], serde_json::Value::Null);
/// assert!(error["error"]["message"].as_str().unwrap().contains("Host"));
/// ```
pub fn refusal_body(refused: Refused, value: Option<&[u8]>) -> Vec<u8> {
    let shown = match value {
        None => "none was sent".to_owned(),
        Some(value) if value.len() <= SHOWN_VALUE && value.iter().all(u8::is_ascii_graphic) => {
            format!("`{}`", String::from_utf8_lossy(value))
        }
        Some(_) => "not shown".to_owned(),
    };
    let option = match refused {
        Refused::Host => "--allowed-hosts",
        Refused::Origin => "--allowed-origins",
    };
    let message = format!(
        "Forbidden: this gateway does not serve this {refused} header ({shown}), \
         a defence against DNS rebinding; its operator can allow it with {option}"
    );
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": message},
    })
    .to_string()
    .into_bytes()
}

/// A `Host` value (or an allowed host) read as a site; `scheme` is kept with it.
fn site<'a>(scheme: Option<Cow<'a, str>>, text: &'a str) -> Option<Site<'a>> {
    let (host, after) = if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let address: Ipv6Addr = inside.parse().ok()?;
        (Cow::Owned(format!("[{address}]")), after)
    } else {
        let end = memchr::memchr(b':', text.as_bytes()).unwrap_or(text.len());
        let (host, after) = text.split_at(end);
        let name_byte = |byte: u8| byte.is_ascii_alphanumeric() || b"-._~".contains(&byte);
        if host.is_empty() || !host.bytes().all(name_byte) {
            return None;
        }
        (lowercase(host), after)
    };
    let port = match after {
        "" => None,
        after => Some(after.strip_prefix(':')?.parse::<u16>().ok()?),
    };
    Some(Site { scheme, host, port })
}

/// `text` in lowercase, copied only when it has an uppercase letter (a request's
/// `Host` seldom has one).
fn lowercase(text: &str) -> Cow<'_, str> {
    match text.bytes().any(|byte| byte.is_ascii_uppercase()) {
        true => Cow::Owned(text.to_ascii_lowercase()),
        false => Cow::Borrowed(text),
    }
}

/// An `Origin` value (or an allowed origin): `scheme://host[:port]`, a `/` after it
/// tolerated. `null` and every other form read as nothing.
fn origin_site(text: &str) -> Option<Site<'_>> {
    let (scheme, rest) = text.split_once("://")?;
    let scheme_byte = |byte: u8| byte.is_ascii_alphanumeric() || b"+-.".contains(&byte);
    if scheme.is_empty() || !scheme.bytes().all(scheme_byte) {
        return None;
    }
    site(
        Some(lowercase(scheme)),
        rest.strip_suffix('/').unwrap_or(rest),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPBACK: &str = "127.0.0.1";
    const LOOPBACK_V6: &str = "::1";
    const EVERYWHERE: &str = "0.0.0.0";

    fn verdict(
        listen: &str,
        allowed: &Allowed,
        host: Option<&str>,
        origin: Option<&str>,
    ) -> Result<(), Refused> {
        check(
            listen.parse().unwrap(),
            allowed,
            host.map(str::as_bytes),
            origin.map(str::as_bytes),
        )
    }

    fn allowing(hosts: &[&str], origins: &[&str]) -> Allowed {
        Allowed {
            hosts: hosts
                .iter()
                .map(|h| parse_allowed_host(h).unwrap())
                .collect(),
            origins: origins
                .iter()
                .map(|o| parse_allowed_origin(o).unwrap())
                .collect(),
        }
    }

    #[test]
    fn a5_on_loopback_only_loopback_hosts_are_served_on_any_port() {
        let none = Allowed::default();
        for listen in [LOOPBACK, LOOPBACK_V6] {
            for host in [
                "localhost",
                "LOCALHOST:8808",
                "127.0.0.1",
                "127.0.0.1:1",
                "127.3.4.5:65535",
                "[::1]",
                "[::1]:8808",
                "[0:0:0:0:0:0:0:1]:80",
            ] {
                assert_eq!(
                    verdict(listen, &none, Some(host), None),
                    Ok(()),
                    "{host} on {listen}"
                );
            }
            for host in [
                "evil.example",
                "evil.example:1234",
                "localhost.evil.example",
                "127.0.0.1.nip.io",
                "10.0.0.5:8808",
                "[::2]:8808",
                "::1",
                "localhost:notaport",
                "localhost:99999",
                "",
                "local host",
            ] {
                assert_eq!(
                    verdict(listen, &none, Some(host), None),
                    Err(Refused::Host),
                    "{host} on {listen}"
                );
            }
            assert_eq!(
                verdict(listen, &none, None, None),
                Err(Refused::Host),
                "no Host"
            );
        }
    }

    #[test]
    fn a5_on_loopback_only_loopback_origins_or_none_are_served() {
        let none = Allowed::default();
        let host = Some("127.0.0.1:8808");
        for origin in [
            None,
            Some("http://localhost:6274"),
            Some("https://localhost"),
            Some("http://127.0.0.1:3000"),
            Some("http://[::1]:3000"),
            Some("HTTP://LocalHost:1/"),
        ] {
            assert_eq!(verdict(LOOPBACK, &none, host, origin), Ok(()), "{origin:?}");
        }
        for origin in [
            "http://evil.example",
            "https://evil.example:443",
            "http://localhost.evil.example",
            "null",
            "localhost",
            "http://",
            "file://",
            "ftp://localhost",
        ] {
            assert_eq!(
                verdict(LOOPBACK, &none, host, Some(origin)),
                Err(Refused::Origin),
                "{origin}"
            );
        }
    }

    #[test]
    fn a5_the_host_is_judged_before_the_origin() {
        let none = Allowed::default();
        assert_eq!(
            verdict(
                LOOPBACK,
                &none,
                Some("evil.example:1234"),
                Some("http://evil.example")
            ),
            Err(Refused::Host)
        );
    }

    #[test]
    fn a5_elsewhere_with_no_list_everything_is_served() {
        let none = Allowed::default();
        for listen in [EVERYWHERE, "::", "10.0.0.5"] {
            assert_eq!(
                verdict(
                    listen,
                    &none,
                    Some("evil.example:1234"),
                    Some("http://evil.example")
                ),
                Ok(())
            );
            assert_eq!(verdict(listen, &none, None, Some("null")), Ok(()));
        }
    }

    #[test]
    fn a5_listed_hosts_and_origins_are_served_and_nothing_else_off_loopback() {
        let allowed = allowing(
            &["mcp.example.com", "10.0.0.5:8808"],
            &["https://app.example.com"],
        );
        let ok = |host, origin| verdict(EVERYWHERE, &allowed, Some(host), origin);
        assert_eq!(ok("mcp.example.com", None), Ok(()));
        assert_eq!(
            ok("MCP.example.com:443", Some("https://app.example.com")),
            Ok(())
        );
        assert_eq!(
            ok("10.0.0.5:8808", Some("https://app.example.com:8443")),
            Ok(())
        );
        assert_eq!(ok("10.0.0.5:8809", None), Err(Refused::Host));
        assert_eq!(
            ok("localhost", None),
            Err(Refused::Host),
            "loopback names are not added off loopback"
        );
        assert_eq!(ok("evil.example", None), Err(Refused::Host));
        assert_eq!(
            ok("mcp.example.com", Some("http://app.example.com")),
            Err(Refused::Origin),
            "the scheme counts"
        );
        assert_eq!(
            ok("mcp.example.com", Some("https://evil.example")),
            Err(Refused::Origin)
        );
        assert_eq!(
            verdict(EVERYWHERE, &allowed, None, None),
            Err(Refused::Host)
        );
    }

    #[test]
    fn a5_on_loopback_a_list_adds_to_the_loopback_names() {
        let allowed = allowing(&["mcp.internal"], &["https://app.internal"]);
        assert_eq!(
            verdict(
                LOOPBACK,
                &allowed,
                Some("mcp.internal:8808"),
                Some("https://app.internal")
            ),
            Ok(())
        );
        assert_eq!(
            verdict(
                LOOPBACK,
                &allowed,
                Some("localhost:8808"),
                Some("http://localhost:3000")
            ),
            Ok(())
        );
        assert_eq!(
            verdict(LOOPBACK, &allowed, Some("evil.example"), None),
            Err(Refused::Host)
        );
    }

    #[test]
    fn a5_a_star_allows_anything() {
        let allowed = allowing(&["*"], &["*"]);
        assert_eq!(
            verdict(LOOPBACK, &allowed, None, Some("http://evil.example")),
            Ok(())
        );
        assert_eq!(
            verdict(LOOPBACK, &allowed, Some("evil.example"), Some("null")),
            Ok(())
        );
    }

    #[test]
    fn a5_a_header_sent_twice_is_refused() {
        let mut headers = HeaderMap::new();
        headers.append(HOST, http::HeaderValue::from_static("localhost"));
        headers.append(HOST, http::HeaderValue::from_static("evil.example"));
        let loopback = LOOPBACK.parse().unwrap();
        assert_eq!(
            check_headers(loopback, &Allowed::default(), &headers),
            Err(Refused::Host)
        );
        headers.remove(HOST);
        headers.insert(HOST, http::HeaderValue::from_static("localhost"));
        headers.append(ORIGIN, http::HeaderValue::from_static("http://localhost"));
        headers.append(ORIGIN, http::HeaderValue::from_static("http://localhost"));
        assert_eq!(
            check_headers(loopback, &Allowed::default(), &headers),
            Err(Refused::Origin)
        );
    }

    #[test]
    fn a5_bad_allowed_entries_are_refused() {
        for host in ["", "http://x", "a b", "x:y", "[::1", "::1"] {
            assert!(parse_allowed_host(host).is_err(), "{host}");
        }
        for origin in ["", "x.example", "http://", "http://a b", "null"] {
            assert!(parse_allowed_origin(origin).is_err(), "{origin}");
        }
    }

    #[test]
    fn a5_a_refusal_names_the_header_and_never_repeats_a_long_value() {
        let long = format!("{}.example", "a".repeat(5000));
        let body = String::from_utf8(refusal_body(Refused::Host, Some(long.as_bytes()))).unwrap();
        assert!(body.len() < 400, "{body}");
        assert!(!body.contains("aaaaaaaa"), "{body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["error"]["code"], -32600);
        assert_eq!(error["id"], serde_json::Value::Null);
        let body =
            String::from_utf8(refusal_body(Refused::Origin, Some(b"http://evil.example"))).unwrap();
        assert!(
            body.contains("Origin header (`http://evil.example`)")
                && body.contains("--allowed-origins"),
            "{body}"
        );
        let body = String::from_utf8(refusal_body(Refused::Host, Some(b"a\"b\r\n"))).unwrap();
        assert!(body.contains("not shown"), "{body}");
    }
}
