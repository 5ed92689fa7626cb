//! Where a running job's own lines go. A job that shows each change as it makes it (an action, a
//! mirror) or has a note for the person running it hands the line to a [`Terminal`] instead of
//! printing: the binary decides where it goes and draws it around its progress display.

use std::io;

use crate::Observer;

/// Takes a running job's lines (and, as an [`Observer`], its problems), from any thread.
pub trait Terminal: Observer {
    /// One line for standard error: a note, a skip, a failure to write the output.
    fn line(&self, text: &str);

    /// One line for standard output; the error when it could not be written (a closed pipe, a
    /// full disk).
    fn out(&self, text: &str) -> io::Result<()>;
}
