//! The one progress bar on stderr, for building and for measuring alike.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps headed `what`, with the current item as its message.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{what} [{{bar:30}}] {{pos}}/{{len}} {{msg}} (elapsed {{elapsed}}, ETA {{eta}})"
        ))
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}
