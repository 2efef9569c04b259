//! Strings and the hosts they name: the characters of a string literal, the host of a URL or
//! an address, and whether that host is local or a placeholder.

use tree_sitter::Node;

use super::text_of;

/// The characters of a string literal, without quotes and prefixes: the named children that
/// hold text (Java `string_fragment`, Python and Rust `string_content`), or none for an f-string
/// or anything that is not a literal.
pub(crate) fn string_value(node: Node<'_>, text: &str) -> Option<String> {
    match node.kind() {
        "string_literal" | "string" | "raw_string_literal" => {
            let mut cursor = node.walk();
            let mut value = String::new();
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_fragment" | "string_content" | "escape_sequence" => {
                        value.push_str(text_of(child, text))
                    }
                    "string_start" | "string_end" => {}
                    _ => return None,
                }
            }
            Some(value)
        }
        _ => None,
    }
}

/// A host named by a string: the host of a URL (`https://example.com/x`), of `host:port`, or a
/// bare IPv4 address; `None` when the string names no host.
pub(crate) fn host_of(value: &str) -> Option<(&str, Option<u32>)> {
    let value = value.trim();
    let authority = match value.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && scheme.chars().all(is_scheme_char) => {
            rest.split(['/', '?', '#']).next()?
        }
        Some(_) => return None,
        None => value,
    };
    let authority = authority.rsplit('@').next()?;
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let (host, rest) = bracketed.split_once(']')?;
            (host, rest.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            Some(_) => return None,
            None => (authority, None),
        },
    };
    let port = match port {
        Some(port) => Some(port.parse::<u32>().ok().filter(|port| *port <= 65_535)?),
        None => None,
    };
    let is_host = if value.contains("://") {
        !host.is_empty()
    } else {
        // Without a scheme only an address with a port, or an IPv4 address, surely names a host:
        // `example.com` alone could as well be a file or a class name.
        is_ipv4(host) || port.is_some() && (is_local(host) || is_domain(host))
    };
    if !is_host {
        return None;
    }
    Some((host, port))
}

/// Whether a host could be reached across a network: an IPv4 address, an IPv6 address, or a
/// dotted name ending in an alphabetic top-level domain. A single label (`no`, `db`) names no host
/// outside the machine, and `1.2.3.4.5` no address.
pub(crate) fn is_reachable(host: &str) -> bool {
    is_ipv4(host) || host.contains(':') || is_domain(host)
}

/// A dotted name ending in one of the common public top-level domains (`github.com`,
/// `hyper.rs`): a bare name that is no file (`config.json`) or property (`user.name`).
pub(crate) fn is_public_domain(host: &str) -> bool {
    const PUBLIC: [&str; 16] = [
        "com", "org", "net", "io", "dev", "rs", "edu", "gov", "app", "co", "uk", "de", "fr",
        "info", "cloud", "ai",
    ];
    is_domain(host)
        && host
            .rsplit('.')
            .next()
            .is_some_and(|tld| PUBLIC.contains(&tld.to_ascii_lowercase().as_str()))
}

/// A dotted name ending in an alphabetic top-level domain: `example.com`, `db.internal.net`.
fn is_domain(host: &str) -> bool {
    host.contains('.')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && host
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

fn is_scheme_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.'
}

fn is_ipv4(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4 && parts.iter().all(|part| part.parse::<u8>().is_ok())
}

/// Hosts that do not leave the machine: connecting to one is not a remote dependency.
pub(crate) fn is_local(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || host == "::1"
        || host == "::"
        || host.is_empty()
        // Reserved for documentation and tests (RFC 2606, RFC 6761): never reached.
        || host.ends_with(".test")
        || host.ends_with(".invalid")
        || host.ends_with(".example")
        // Link-local names (RFC 6762): the local network at most, never a host on the internet.
        || host.ends_with(".local")
}

/// The domains reserved as examples (RFC 2606): `example.com`, `www.example.org`. A test names
/// one as data (a request built and inspected, a URL parsed); a call that connects to one is
/// still a remote connection, which [`is_local`] decides.
pub(crate) fn is_placeholder(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    ["example.com", "example.net", "example.org"]
        .iter()
        .any(|domain| {
            host.strip_suffix(domain)
                .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_found_in_urls_authorities_and_addresses() {
        assert_eq!(
            host_of("https://example.com/data"),
            Some(("example.com", None))
        );
        assert_eq!(host_of("example.com:80"), Some(("example.com", Some(80))));
        assert_eq!(host_of("10.1.1.1"), Some(("10.1.1.1", None)));
        assert_eq!(host_of("localhost:8080"), Some(("localhost", Some(8080))));
        assert_eq!(
            host_of("http://127.0.0.1:9000/x"),
            Some(("127.0.0.1", Some(9000)))
        );
        assert_eq!(host_of("hello world"), None);
        assert_eq!(host_of("a.txt"), None);
        assert_eq!(host_of("java.lang.String"), None);
        assert_eq!(host_of("key:value"), None);
    }

    #[test]
    fn local_hosts_are_recognised() {
        assert!(is_local("localhost"));
        assert!(is_local("127.0.0.1"));
        assert!(is_local("api.test"));
        assert!(!is_local("example.com"));
        assert!(is_placeholder("www.Example.org"));
        assert!(!is_placeholder("notexample.com"));
        assert!(!is_placeholder("example.community"));
        assert!(!is_local("10.1.1.1"));
    }
}
