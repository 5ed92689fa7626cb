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
    if matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH)) {
        return false;
    }
    // A process killed but not yet waited for by its parent is a zombie: signals still reach
    // its pid, yet it runs no more, and its claims must not lock a volume out until the parent
    // gets round to `wait` (a supervisor that kills a mount and starts it again at once).
    !is_zombie(pid.as_raw_nonzero().get())
}

/// Whether process `pid` has ended and waits to be reaped: state `Z` (or `X`) in
/// `/proc/PID/stat`, with no thread of it left running. Unknown (no /proc) is not a zombie.
fn is_zombie(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    // The state follows the command name, in parentheses that may themselves hold ") ".
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
    if !matches!(state, Some("Z" | "X")) {
        return false;
    }
    // A leader that ended while other threads of it run shows `Z` too: its tasks tell.
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(true, |tasks| tasks.count() <= 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_child_not_yet_reaped_runs_no_more() {
        let mut child = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let pid = child.id();
        assert!(process_runs(pid));
        child.kill().unwrap();
        // Not waited for: a zombie until `wait` below.
        let start = std::time::Instant::now();
        while process_runs(pid) {
            assert!(start.elapsed().as_secs() < 10, "a killed child still counts as running");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(std::fs::metadata(format!("/proc/{pid}")).is_ok(), "reaped too early");
        child.wait().unwrap();
    }

    #[test]
    fn this_process_runs_and_pid_zero_is_none() {
        assert!(process_runs(std::process::id()));
        assert!(!process_runs(0));
        assert!(!this_host().is_empty());
    }
}
