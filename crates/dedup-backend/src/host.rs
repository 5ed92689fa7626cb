//! This machine as the repository's writers record it: its host name, and whether one of its
//! processes still runs — how a session's leftovers (writer markers, temporary files) are told
//! apart from the work of a session still going.

/// This machine's host name.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// Whether process `pid` of this machine is running.
pub fn process_runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    // EPERM: it runs, as another user.
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_pid_zero_is_none() {
        assert!(process_runs(std::process::id()));
        assert!(!process_runs(0));
        assert!(!this_host().is_empty());
    }
}
