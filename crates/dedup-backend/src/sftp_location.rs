//! Parsing of repository locations on an SFTP server: `sftp://[USER@]HOST[:PORT]/PATH` and
//! restic's `sftp:[USER@]HOST:PATH`.
//!
//! As in restic, the path of the URL form is relative to the login directory (`sftp://h/repo` is
//! `~/repo`) and begins with a second `/` when absolute (`sftp://h//srv/repo`); the short form's
//! path is used as written (`sftp:h:repo` is `~/repo`, `sftp:h:/srv/repo` is `/srv/repo`).

/// The parts of an SFTP location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SftpLocation {
    /// The login name, when the location gives one (else ssh's configuration or the local user).
    pub user: Option<String>,
    /// The host name or address, as ssh is to be given it (IPv6 without brackets).
    pub host: String,
    /// The port, when the location gives one (else ssh's configuration or 22).
    pub port: Option<u16>,
    /// The repository's folder: absolute when it begins with `/`, else under the login
    /// directory. Never empty (`.` for the login directory itself).
    pub path: String,
}

impl SftpLocation {
    /// Parses `location`, which starts with `sftp:`.
    pub fn parse(location: &str) -> Result<SftpLocation, String> {
        let bad = |why: &str| {
            format!(
                "{location}: {why} (expected sftp://[USER@]HOST[:PORT]/PATH or sftp:[USER@]HOST:PATH)"
            )
        };
        let rest = location.strip_prefix("sftp:").ok_or_else(|| bad("not an sftp: location"))?;
        let (user_host, port, path) = if let Some(url) = rest.strip_prefix("//") {
            let (authority, path) = url.split_once('/').ok_or_else(|| bad("no path"))?;
            let (user_host, port) = split_port(authority).map_err(|why| bad(&why))?;
            (user_host, port, path)
        } else {
            // USER@HOST:PATH, where HOST may be a bracketed IPv6 address.
            let colon = match rest
                .strip_prefix('[')
                .or_else(|| rest.split_once('@').and_then(|(_, host)| host.strip_prefix('[')))
            {
                Some(bracketed) => {
                    let close = bracketed.find(']').ok_or_else(|| bad("no closing `]`"))?;
                    let offset = rest.len() - bracketed.len() + close + 1;
                    if rest[offset..].starts_with(':') {
                        offset
                    } else {
                        return Err(bad("no `:` between the host and the path"));
                    }
                }
                None => {
                    rest.find(':').ok_or_else(|| bad("no `:` between the host and the path"))?
                }
            };
            (&rest[..colon], None, &rest[colon + 1..])
        };
        let (user, host) = match user_host.rsplit_once('@') {
            Some((user, host)) => {
                if user.is_empty() {
                    return Err(bad("empty user name"));
                }
                (Some(user.to_string()), host)
            }
            None => (None, user_host),
        };
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        if host.is_empty() {
            return Err(bad("no host"));
        }
        if host.starts_with('-') || host.contains(char::is_whitespace) {
            return Err(bad("not a host name"));
        }
        let path = path.trim_end_matches('/');
        let path = if path.is_empty() { "." } else { path };
        if path.split('/').any(|p| p == "..") {
            return Err(bad("`..` is not allowed in the path"));
        }
        Ok(SftpLocation { user, host: host.to_string(), port, path: path.to_string() })
    }

    /// The destination as ssh takes it: `ssh://[USER@]HOST[:PORT]`.
    pub fn destination(&self) -> String {
        let user = self.user.as_ref().map(|u| format!("{u}@")).unwrap_or_default();
        let host =
            if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("ssh://{user}{host}{port}")
    }
}

/// `[USER@]HOST[:PORT]` split into `[USER@]HOST` and the port.
fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    // A `:` after a `]` or in a name without brackets starts the port.
    let host_end = authority.rfind(']').map(|i| i + 1).unwrap_or(0);
    match authority[host_end..].rfind(':') {
        Some(i) => {
            let colon = host_end + i;
            let port = authority[colon + 1..]
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| "the port must be a number from 1 to 65535".to_string())?;
            Ok((&authority[..colon], Some(port)))
        }
        None => Ok((authority, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(location: &str) -> (Option<String>, String, Option<u16>, String) {
        let loc = SftpLocation::parse(location).unwrap();
        (loc.user, loc.host, loc.port, loc.path)
    }

    #[test]
    fn url_locations_split_into_user_host_port_and_path() {
        assert_eq!(
            parts("sftp://alice@example.com:2222/backups/repo/"),
            (Some("alice".into()), "example.com".into(), Some(2222), "backups/repo".into())
        );
        assert_eq!(parts("sftp://h//srv/repo"), (None, "h".into(), None, "/srv/repo".into()));
        assert_eq!(parts("sftp://h/"), (None, "h".into(), None, ".".into()));
        assert_eq!(
            parts("sftp://u@[::1]:22/r"),
            (Some("u".into()), "::1".into(), Some(22), "r".into())
        );
        assert_eq!(
            SftpLocation::parse("sftp://u@[::1]:22/r").unwrap().destination(),
            "ssh://u@[::1]:22"
        );
        assert_eq!(SftpLocation::parse("sftp://h//x").unwrap().destination(), "ssh://h");
    }

    #[test]
    fn restic_short_locations_keep_their_path_as_written() {
        assert_eq!(
            parts("sftp:bob@host:/srv/repo"),
            (Some("bob".into()), "host".into(), None, "/srv/repo".into())
        );
        assert_eq!(parts("sftp:host:repo"), (None, "host".into(), None, "repo".into()));
        assert_eq!(parts("sftp:[::1]:/r"), (None, "::1".into(), None, "/r".into()));
        assert_eq!(
            parts("sftp:u@[fe80::1]:r"),
            (Some("u".into()), "fe80::1".into(), None, "r".into())
        );
    }

    #[test]
    fn malformed_locations_are_refused() {
        for bad in [
            "sftp://",
            "sftp://host",
            "sftp:///path",
            "sftp://h:0/p",
            "sftp://h:x/p",
            "sftp://@h/p",
            "sftp:host",
            "sftp:[::1/r",
            "sftp://-oProxyCommand=x/p",
            "sftp://h/a/../b",
            "s3:http://h/b",
        ] {
            assert!(SftpLocation::parse(bad).is_err(), "{bad}");
        }
    }
}
