//! The one progress bar on stderr, for building and for measuring alike: drawn only on a
//! terminal, and never wider than [`crate::terminal::width`] allows (the current item is
//! cut to what is left of the line).

use std::io;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

use crate::terminal::{self, Stream};

/// A bar of `len` steps headed `what`, with the current item as its message.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let target = if terminal::is_terminal(Stream::Stderr) {
        ProgressDrawTarget::term_like(Box::new(Stderr(console::Term::stderr())))
    } else {
        ProgressDrawTarget::hidden()
    };
    styled(ProgressBar::with_draw_target(Some(len), target), what)
}

/// `bar` drawn on any terminal-like target (tests draw on one of fixed width).
pub fn styled(bar: ProgressBar, what: &str) -> ProgressBar {
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{what} [{{bar:16}}] {{pos}}/{{len}} {{elapsed}}, ETA {{eta}} {{wide_msg}}"
        ))
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}

/// stderr as indicatif draws on it, as wide as the terminal module says.
#[derive(Debug)]
struct Stderr(console::Term);

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        u16::try_from(terminal::width(Stream::Stderr)).unwrap_or(u16::MAX)
    }
    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }
    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }
    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }
    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }
    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }
    fn write_str(&self, s: &str) -> io::Result<()> {
        self.0.write_str(s)
    }
    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }
    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Records every line drawn at a fixed width.
    #[derive(Debug, Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl TermLike for Recorder {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.0.lock().unwrap().extend(s.lines().map(String::from));
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_bar_fits_80_columns_however_long_the_item() {
        let rec = Recorder::default();
        let target = ProgressDrawTarget::term_like(Box::new(rec.clone()));
        let bar = styled(ProgressBar::with_draw_target(Some(340), target), "preparing read databases");
        bar.set_message("LMDB_0.9.33 (clang -O2 -fno-omit-frame-pointer) readXxh64 round 17 of 20, warm-up done");
        bar.inc(17);
        bar.tick();
        let lines = rec.0.lock().unwrap().clone();
        assert!(!lines.is_empty());
        for l in &lines {
            let shown = console::strip_ansi_codes(l);
            assert!(console::measure_text_width(&shown) <= 80, "{} columns: {shown}", shown.chars().count());
        }
        assert!(lines.iter().any(|l| l.contains("17/340") && l.contains("LMDB_0.9.33")), "{lines:?}");
    }
}
