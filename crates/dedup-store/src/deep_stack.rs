//! Room for deep trees: the walks that follow a snapshot's trees by recursion (restore,
//! rewrite, repair snapshots) run on a thread of their own whose stack holds a tree as deep as
//! a file system makes (a 10,000-deep chain of directories backs up like any other tree), where
//! the main thread's 8 MiB ran out and the process aborted.

/// The stack of such a walk: address space reserved, touched only as deep as the tree goes.
const DEEP_STACK: usize = 1 << 30;

/// Runs `work` on a thread with [`DEEP_STACK`] of stack and returns what it returns (a panic
/// goes on in the caller).
pub fn on_deep_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let slot = std::sync::Mutex::new(Some(work));
    let take = || slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    std::thread::scope(|scope| {
        let walk = std::thread::Builder::new()
            .name("tree walk".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, || take().map(|work| work()));
        let done = match walk {
            Ok(walk) => walk.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        // No thread to be had: the walk runs here, as deep as this stack allows.
        done.unwrap_or_else(|| take().expect("the work runs once")())
    })
}
