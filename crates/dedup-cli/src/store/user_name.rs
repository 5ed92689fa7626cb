//! The name of a user id, from the system's user database (`getpwuid_r`), for the user a
//! snapshot records: `$USER` may be unset (cron, containers) or name someone else (`sudo -E`).

#![allow(unsafe_code)]

use std::ffi::CStr;

/// The name of `uid`, or `None` when the user database has no entry for it (or the name is not
/// UTF-8).
pub fn of_uid(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: all-zero bytes are a valid `passwd` (null pointers and zero ids).
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `entry`, `buf` (with its true length) and `found` are valid for writes for
        // the call; the strings `getpwuid_r` sets point into `buf`, which outlives their use.
        let err = unsafe {
            libc::getpwuid_r(uid, &mut entry, buf.as_mut_ptr().cast(), buf.len(), &mut found)
        };
        if err == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if err != 0 || found.is_null() || entry.pw_name.is_null() {
            return None;
        }
        // SAFETY: on success `pw_name` is a NUL-terminated string inside `buf`.
        let name = unsafe { CStr::from_ptr(entry.pw_name) };
        return name.to_str().ok().filter(|n| !n.is_empty()).map(str::to_owned);
    }
}

#[cfg(test)]
mod tests {
    use super::of_uid;

    #[test]
    fn root_has_a_name_and_an_unused_id_has_none() {
        assert_eq!(of_uid(0).as_deref(), Some("root"));
        assert_eq!(of_uid(3_999_999_999), None);
    }
}
