//! Which addresses outgoing requests (webhooks) may reach.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

/// Which addresses a webhook may post to. By default only public ones: a webhook must not
/// reach the server's own network (cloud metadata, databases, admin ports).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Any address at all (`UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION`).
    pub allow_private: bool,
    /// Hosts whose addresses may be private (`UNLEASH_ALLOW_LIST_INTEGRATION`), compared
    /// without letter case.
    pub allow_list: Vec<String>,
}

impl UrlPolicy {
    /// Whether `host` may post to `address`.
    pub fn permits(&self, host: &str, address: IpAddr) -> bool {
        self.allow_private
            || self
                .allow_list
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(host))
            || is_public(address)
    }

    /// Checks a webhook URL as Unleash does when it is saved: `http` or `https`, a host that
    /// resolves, and only addresses the policy permits. Resolving blocks.
    pub fn check(&self, text: &str) -> Result<url::Url, String> {
        let url = url::Url::parse(text).map_err(|error| format!("Invalid URL {text:?}: {error}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("Invalid protocol: {}:", url.scheme()));
        }
        let host = match url.host() {
            Some(url::Host::Domain(domain)) => domain.to_ascii_lowercase(),
            Some(url::Host::Ipv4(address)) => address.to_string(),
            Some(url::Host::Ipv6(address)) => address.to_string(),
            None => return Err(format!("Invalid URL {text:?}: no host")),
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let addresses: Vec<IpAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map(|addresses| addresses.map(|address| address.ip()).collect())
            .unwrap_or_default();
        if addresses.is_empty() {
            return Err(format!("Hostname did not resolve: {host}"));
        }
        if let Some(blocked) = addresses.iter().find(|address| !self.permits(&host, **address)) {
            return Err(format!("URL resolves to a non-public address: {blocked}"));
        }
        Ok(url)
    }
}

/// Whether an address is on the public internet: not loopback, private, link-local, shared,
/// documentation, benchmarking, multicast or reserved space (Unleash's list).
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn in_v4(address: Ipv4Addr, network: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(address) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

fn is_public_v4(address: Ipv4Addr) -> bool {
    const BLOCKED: [([u8; 4], u32); 14] = [
        ([127, 0, 0, 0], 8),
        ([10, 0, 0, 0], 8),
        ([172, 16, 0, 0], 12),
        ([192, 168, 0, 0], 16),
        ([169, 254, 0, 0], 16),
        ([0, 0, 0, 0], 8),
        ([100, 64, 0, 0], 10),
        ([192, 0, 0, 0], 24),
        ([192, 0, 2, 0], 24),
        ([198, 18, 0, 0], 15),
        ([198, 51, 100, 0], 24),
        ([203, 0, 113, 0], 24),
        ([224, 0, 0, 0], 4),
        ([240, 0, 0, 0], 4),
    ];
    !BLOCKED
        .iter()
        .any(|(network, prefix)| in_v4(address, *network, *prefix))
}

fn is_public_v6(address: Ipv6Addr) -> bool {
    const BLOCKED: [(u128, u32); 8] = [
        (1, 128),                                        // ::1
        (0, 128),                                        // ::
        (0xfe80 << 112, 10),                             // link-local
        (0xfc00 << 112, 7),                              // unique local
        (0xff00 << 112, 8),                              // multicast
        (0x2001_0db8 << 96, 32),                         // documentation
        (0x2002 << 112, 16),                             // 6to4
        (0x0064_ff9b_0000_0000_0000_0000_0000_0000, 96), // NAT64
    ];
    let bits = u128::from(address);
    !BLOCKED.iter().any(|(network, prefix)| {
        let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
        bits & mask == network & mask
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_reserved_addresses_are_not_public() -> Result<(), std::net::AddrParseError> {
        for address in [
            "127.0.0.1",
            "10.1.2.3",
            "172.31.255.255",
            "192.168.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "64:ff9b::1",
        ] {
            let address: IpAddr = address.parse()?;
            assert!(!is_public(address), "{address} counted as public");
        }
        for address in ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111"] {
            let address: IpAddr = address.parse()?;
            assert!(is_public(address), "{address} counted as private");
        }
        Ok(())
    }

    #[test]
    fn the_policy_refuses_private_hosts_unless_allowed() {
        let strict = UrlPolicy::default();
        assert_eq!(
            strict.check("http://127.0.0.1:9/hook").err().as_deref(),
            Some("URL resolves to a non-public address: 127.0.0.1")
        );
        assert_eq!(
            strict.check("ftp://example.com/").err().as_deref(),
            Some("Invalid protocol: ftp:")
        );
        assert!(
            strict
                .check("not a url")
                .is_err_and(|error| error.starts_with("Invalid URL"))
        );
        let listed = UrlPolicy {
            allow_private: false,
            allow_list: vec!["LOCALHOST".into()],
        };
        assert!(listed.check("http://localhost:9/hook").is_ok());
        assert!(listed.check("http://127.0.0.1:9/hook").is_err());
        let open = UrlPolicy {
            allow_private: true,
            allow_list: Vec::new(),
        };
        assert!(open.check("http://127.0.0.1:9/hook").is_ok());
    }
}
