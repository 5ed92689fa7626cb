//! The name of a user id, for the user a snapshot records: from `/etc/passwd`, read directly
//! since the binary links glibc statically and `getpwuid_r` would load NSS modules at run time
//! (it crashes when their glibc is not the one linked in); else from `$USER` (a directory
//! user's login sets it), which alone may be unset (cron, containers) or name someone else.

/// The `(name, uid)` of each entry of the passwd database `text` (lines `name:password:uid:…`).
fn entries(text: &str) -> impl Iterator<Item = (&str, u32)> {
    text.lines().filter_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next().filter(|n| !n.is_empty() && !n.starts_with('#'))?;
        Some((name, fields.nth(1)?.parse().ok()?))
    })
}

/// The name of `uid` in the passwd database `text`.
fn in_passwd(text: &str, uid: u32) -> Option<String> {
    entries(text).find(|(_, id)| *id == uid).map(|(name, _)| name.to_owned())
}

/// The name of `uid`: its entry in `/etc/passwd`; else `user` (`$USER`) unless that names a
/// local user of another id (an environment inherited from someone else); else `None`.
fn name_of(passwd: &str, uid: u32, user: Option<String>) -> Option<String> {
    if let Some(name) = in_passwd(passwd, uid) {
        return Some(name);
    }
    // A directory user (LDAP, sssd) the local file does not list.
    user.filter(|u| !u.is_empty() && !entries(passwd).any(|(name, _)| name == u))
}

/// The name of `uid` on this machine, if one is known.
pub fn of_uid(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    name_of(&passwd, uid, std::env::var("USER").ok())
}

/// The user's name, for key labels and snapshots: the name of the effective user id, else
/// `uid<N>` (which `snapshots --json` shows as the number).
pub fn current() -> String {
    let uid = rustix::process::geteuid().as_raw();
    of_uid(uid).unwrap_or_else(|| format!("uid{uid}"))
}

/// The label of a key this client makes: `user@host`.
pub fn key_label() -> String {
    format!("{}@{}", current(), crate::repo::this_host())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uid_is_named_by_its_passwd_line() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n# a comment:x:7:7\n\nalice:x:1000:1000::/home/alice:/bin/sh\nbad:x:notanumber:0\n";
        assert_eq!(in_passwd(passwd, 0).as_deref(), Some("root"));
        assert_eq!(in_passwd(passwd, 1000).as_deref(), Some("alice"));
        assert_eq!(in_passwd(passwd, 7), None);
        assert_eq!(in_passwd(passwd, 4242), None);
        assert_eq!(of_uid(0).as_deref(), Some("root"));
        // Unlisted: $USER, unless it names a local user of another id.
        assert_eq!(name_of(passwd, 4242, Some("carol".into())).as_deref(), Some("carol"));
        assert_eq!(name_of(passwd, 4242, Some("root".into())), None);
        assert_eq!(name_of(passwd, 4242, None), None);
        assert_eq!(name_of(passwd, 1000, Some("root".into())).as_deref(), Some("alice"));
    }
}
