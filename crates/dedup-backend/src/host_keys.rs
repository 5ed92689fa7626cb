//! How the SFTP backend checks a server's host key: as the user's ssh configuration says.
//!
//! The ssh processes are started by the openssh crate (ours and OpenDAL's), which always passes
//! `-o StrictHostKeyChecking=…` on the command line, where it would override the user's own
//! setting. So the setting is read first, as ssh itself resolves it for the destination
//! (`ssh -G`, which applies `Host` and `Match` blocks), and passed on: `yes` stays `yes`;
//! `accept-new` and `no` are the user's choice and are kept; `ask`, ssh's default, cannot ask
//! here (ssh runs in batch mode) and becomes `yes`. An unknown host is then refused unless the
//! user chose to accept new ones, in the configuration or with the explicit opt-in.

use std::process::{Command, Stdio};

use openssh::KnownHosts;

/// The host key check for one destination.
#[derive(Debug, Clone)]
pub(super) struct HostKeyPolicy {
    /// What ssh is told.
    pub check: KnownHosts,
    /// Where it comes from, for messages.
    why: String,
}

impl HostKeyPolicy {
    /// The policy for `destination` (`ssh://…`): accept-new when `accept_new` asks for it, else
    /// what `ssh -G` resolves (`yes` when it cannot be read).
    pub fn for_destination(destination: &str, accept_new: bool) -> HostKeyPolicy {
        if accept_new {
            return HostKeyPolicy {
                check: KnownHosts::Add,
                why: "accept-new, as asked on the command line".into(),
            };
        }
        let resolved = Command::new("ssh")
            .arg("-G")
            .arg(destination)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .and_then(|out| configured(&String::from_utf8_lossy(&out.stdout)));
        HostKeyPolicy::from_setting(resolved.as_deref())
    }

    /// The policy for the resolved `StrictHostKeyChecking` value (None: not readable).
    fn from_setting(value: Option<&str>) -> HostKeyPolicy {
        let (check, why) = match value {
            Some("true" | "yes") => (KnownHosts::Strict, "StrictHostKeyChecking yes in the ssh configuration"),
            Some("accept-new") => (KnownHosts::Add, "StrictHostKeyChecking accept-new in the ssh configuration"),
            Some("false" | "no" | "off") => (KnownHosts::Accept, "StrictHostKeyChecking no in the ssh configuration"),
            Some("ask") => (
                KnownHosts::Strict,
                "StrictHostKeyChecking ask (ssh's default), which cannot ask here: an unknown host is refused",
            ),
            _ => (KnownHosts::Strict, "the ssh configuration could not be read (ssh -G): an unknown host is refused"),
        };
        HostKeyPolicy { check, why: why.into() }
    }

    /// The same for OpenDAL's sftp service, which names the three checks in words.
    pub fn opendal_strategy(&self) -> &'static str {
        match self.check {
            KnownHosts::Strict => "strict",
            KnownHosts::Add => "add",
            KnownHosts::Accept => "accept",
        }
    }

    /// The message when ssh refused the server's host key.
    pub fn refusal(&self, destination: &str) -> String {
        format!(
            "ssh {destination}: the server's host key is not in known_hosts, or differs from the \
             one recorded there, and the host key check refuses it ({}). If the server is new, \
             check its key fingerprint and add it (connect once with `ssh`, or `ssh-keyscan` \
             into known_hosts), or let dedup record it with --accept-new-host-key; a changed \
             key may be a man in the middle",
            self.why
        )
    }
}

/// The value of `stricthostkeychecking` in `ssh -G` output.
fn configured(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let (key, value) = line.split_once(' ')?;
        key.eq_ignore_ascii_case("stricthostkeychecking").then(|| value.trim().to_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: Option<&str>) -> &'static str {
        HostKeyPolicy::from_setting(value).opendal_strategy()
    }

    #[test]
    fn the_configured_setting_decides_and_ask_refuses_unknown_hosts() {
        assert_eq!(check(Some("true")), "strict");
        assert_eq!(check(Some("ask")), "strict");
        assert_eq!(check(None), "strict");
        assert_eq!(check(Some("accept-new")), "add");
        assert_eq!(check(Some("false")), "accept");
        let output = "user root\nstricthostkeychecking accept-new\nbatchmode no\n";
        assert_eq!(configured(output).as_deref(), Some("accept-new"));
        assert_eq!(configured("user root\n"), None);
        let explicit = HostKeyPolicy::for_destination("ssh://h", true);
        assert_eq!(explicit.opendal_strategy(), "add");
        assert!(explicit.refusal("ssh://h").contains("--accept-new-host-key"));
    }
}
