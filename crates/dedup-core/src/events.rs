//! How a running job tells its caller what went wrong without printing: problems are handed to
//! an [`Observer`] as they happen (progress is the other channel: [`crate::Progress`]).

use crate::Problem;

/// Receives problems as they happen, from any thread.
pub trait Observer: Sync {
    /// Called once per problem.
    fn problem(&self, problem: Problem);
}

/// An observer that drops everything: for callers that only want the result.
impl Observer for () {
    fn problem(&self, _problem: Problem) {}
}
