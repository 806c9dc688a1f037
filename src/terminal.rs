//! The one place that decides how wide console output may be, and fits text to it: tables
//! and progress bars ask [`width`]; long paths are shortened whole ([`fit_path`]), never
//! broken mid-word.

use std::path::Path;

/// Where a piece of console output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The width when the output is no terminal (a pipe, a file, a CI log): what an 80-column
/// terminal, a mail or a bug tracker shows without wrapping.
pub const DEFAULT_WIDTH: usize = 80;
/// Narrower than this, nothing fits; `COLUMNS` below it is ignored.
const MIN_WIDTH: usize = 40;

/// Columns available on `stream`: `COLUMNS` when set (as `ls` honours it), else the
/// terminal's width, else [`DEFAULT_WIDTH`].
pub fn width(stream: Stream) -> usize {
    let columns = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok());
    if let Some(c) = columns.filter(|c| *c >= MIN_WIDTH) {
        return c;
    }
    let term = match stream {
        Stream::Stdout => console::Term::stdout(),
        Stream::Stderr => console::Term::stderr(),
    };
    match term.size_checked() {
        Some((_, w)) if term.is_term() && usize::from(w) >= MIN_WIDTH => usize::from(w),
        _ => DEFAULT_WIDTH,
    }
}

/// Whether `stream` is a terminal someone watches (progress bars are drawn only there).
pub fn is_terminal(stream: Stream) -> bool {
    match stream {
        Stream::Stdout => console::Term::stdout().is_term(),
        Stream::Stderr => console::Term::stderr().is_term(),
    }
}

/// `path` relative to `base` when it lies inside it, else as it is.
pub fn relative<'a>(path: &'a Path, base: &Path) -> &'a Path {
    path.strip_prefix(base).unwrap_or(path)
}

/// A path in at most `max` columns: whole, or `…/` and as many whole trailing components
/// as fit (at least the file name, however long).
pub fn fit_path(path: &Path, max: usize) -> String {
    let full = path.display().to_string();
    if full.chars().count() <= max {
        return full;
    }
    let parts: Vec<String> = path.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let mut tail = parts.last().cloned().unwrap_or_default();
    for p in parts.iter().rev().skip(1) {
        let longer = format!("{p}/{tail}");
        if longer.chars().count() + 2 > max {
            break;
        }
        tail = longer;
    }
    format!("…/{tail}")
}

/// A console table no wider than `width`: cells wrap between words, no word is broken,
/// and the words of `shorten` columns (paths, URLs, commit ids) are shortened whole
/// ([`fit_word`]) when the columns would not fit otherwise.
pub fn table(header: &[&str], rows: &[Vec<String>], width: usize, shorten: &[usize]) -> String {
    use comfy_table::{presets::UTF8_BORDERS_ONLY, ColumnConstraint, ContentArrangement, Table, Width};
    let longest_word = |cells: &mut dyn Iterator<Item = &str>| {
        cells.flat_map(str::split_whitespace).map(|w| w.chars().count()).max().unwrap_or(0)
    };
    let column = |i: usize| std::iter::once(header[i]).chain(rows.iter().map(move |r| r[i].as_str()));
    // Per column two of padding, one between neighbours (a blank rule), and the two borders.
    let overhead = 3 * header.len() + 1;
    let fixed: usize = (0..header.len()).filter(|i| !shorten.contains(i)).map(|i| longest_word(&mut column(i))).sum();
    // The room left goes to the shortened columns, the least needy first, so that a column
    // of short words leaves the rest to a column of long ones.
    let mut needs: Vec<(usize, usize)> = shorten.iter().map(|&i| (longest_word(&mut column(i)), i)).collect();
    needs.sort();
    let (mut room, mut budgets) = (width.saturating_sub(overhead + fixed), vec![usize::MAX; header.len()]);
    for (k, (need, i)) in needs.iter().enumerate() {
        budgets[*i] = (*need).min(room / (needs.len() - k)).max(12);
        room = room.saturating_sub(budgets[*i]);
    }
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let fit = |(i, c): (usize, &String)| {
                if !shorten.contains(&i) {
                    return c.clone();
                }
                c.split_whitespace().map(|w| fit_word(w, budgets[i])).collect::<Vec<_>>().join(" ")
            };
            r.iter().enumerate().map(fit).collect()
        })
        .collect();
    let minimum: usize = (0..header.len())
        .map(|i| longest_word(&mut std::iter::once(header[i]).chain(rows.iter().map(|r| r[i].as_str()))))
        .sum::<usize>()
        + overhead;
    if minimum > width {
        return records(header, &rows, width);
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX))
        .set_header(header.to_vec());
    for r in &rows {
        t.add_row(r.clone());
    }
    for i in 0..header.len() {
        let min = std::iter::once(header[i]).chain(rows.iter().map(|r| r[i].as_str()));
        let min = u16::try_from(longest_word(&mut min.into_iter())).unwrap_or(u16::MAX);
        // The boundary counts the column's padding too.
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(min.saturating_add(2))));
        }
    }
    format!("{t}\n")
}

/// A table too wide for any arrangement, as one record per row: the first cell, then each
/// other as "header: value", wrapped to `width`.
fn records(header: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&wrap(&r[0], width, ""));
        out.push('\n');
        for (h, v) in header.iter().zip(r).skip(1) {
            out.push_str(&wrap(&format!("  {h}: {v}"), width, "    "));
            out.push('\n');
        }
    }
    out
}

/// A word in at most `max` columns: a path (or URL) by its trailing components
/// ([`fit_path`]), anything else (a commit id) by its head and "…".
pub fn fit_word(word: &str, max: usize) -> String {
    if word.chars().count() <= max {
        word.to_string()
    } else if word.contains('/') {
        fit_path(Path::new(word), max)
    } else {
        format!("{}…", word.chars().take(max.saturating_sub(1).max(7)).collect::<String>())
    }
}

/// Prose wrapped at word boundaries to `width`, each line after the first indented.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    // Lines break at spaces only: never inside a path, a URL or a hyphenated name.
    let opts = textwrap::Options::new(width)
        .subsequent_indent(indent)
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, opts).join("\n")
}

/// A message as stderr shows it. On a terminal each of its lines is wrapped between words
/// to the terminal's width (the terminal itself would cut words and paths anywhere); in a
/// log or a pipe every line stays whole, for grep and for scripts.
pub fn stderr_text(message: &str) -> String {
    match is_terminal(Stream::Stderr) {
        true => wrap_lines(message, width(Stream::Stderr)),
        false => message.to_string(),
    }
}

/// Each line of `text` wrapped to `width` on its own: a line keeps its indentation, and
/// what it wraps onto is indented two more.
fn wrap_lines(text: &str, width: usize) -> String {
    let wrapped = text.lines().map(|line| {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let more = format!("{indent}  ");
        let opts = textwrap::Options::new(width)
            .initial_indent(indent)
            .subsequent_indent(&more)
            .break_words(false)
            .word_separator(textwrap::WordSeparator::AsciiSpace)
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        textwrap::wrap(body, opts).join("\n")
    });
    wrapped.collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_shortened_by_whole_components() {
        let p = Path::new("/home/someone/.cache/lmdb-regress/builds/LMDB_0.9.33-so-0123456789abcdef/liblmdb.so");
        assert_eq!(fit_path(p, 200), p.display().to_string());
        let short = fit_path(p, 52);
        assert_eq!(short, "…/builds/LMDB_0.9.33-so-0123456789abcdef/liblmdb.so");
        assert!(short.chars().count() <= 52);
        assert_eq!(fit_path(p, 50), "…/LMDB_0.9.33-so-0123456789abcdef/liblmdb.so");
        // Too narrow for any directory: the file name stays whole.
        assert_eq!(fit_path(p, 5), "…/liblmdb.so");
    }

    #[test]
    fn tables_fit_the_width_and_keep_words_whole() {
        let lib = "/home/someone/.cache/lmdb-regress/builds/LMDB_0.9.33-so-0123456789abcdef/liblmdb.so".to_string();
        let rows: Vec<Vec<String>> = (0..3)
            .map(|i| {
                vec![
                    format!("LMDB_0.9.3{i} (clang -O2)"),
                    "built".into(),
                    "PyPI sdist lmdb 1.4.1 from the package registry, identical".into(),
                    format!("git commit {}", "0123456789abcdef0123456789abcdef01234567"),
                    lib.clone(),
                ]
            })
            .collect();
        for width in [80, 100, 160] {
            let t = table(&["tag", "status", "sources", "commit", "library"], &rows, width, &[3, 4]);
            for l in t.lines() {
                assert!(l.chars().count() <= width, "{} > {width}: {l}\n{t}", l.chars().count());
            }
            assert!(t.contains("liblmdb.so") && t.contains("LMDB_0.9.32") && t.contains("registry,"), "{t}");
        }
        let narrow = table(&["tag", "status", "sources", "commit", "library"], &rows, 40, &[3, 4]);
        assert!(narrow.lines().all(|l| l.chars().count() <= 40), "{narrow}");
        assert!(narrow.contains("  status: built"), "one record per row: {narrow}");
        let wide = table(
            &["tag", "library"],
            &rows.iter().map(|r| vec![r[0].clone(), r[4].clone()]).collect::<Vec<_>>(),
            200,
            &[1],
        );
        assert!(wide.contains(&lib), "{wide}");
    }

    #[test]
    fn each_line_of_an_error_wraps_on_its_own_and_keeps_its_indentation() {
        let text = "error: LMDB_0.9.33: LMDB's mtest2.c (commit 1a2b3c4d5e) exited with status 1\n  \
                    mdb.c:1942: a long line of the compiler's output that goes on\n  short";
        let w = wrap_lines(text, 40);
        assert!(w.lines().all(|l| l.chars().count() <= 40), "{w}");
        let lines: Vec<&str> = w.lines().collect();
        assert_eq!(lines[0], "error: LMDB_0.9.33: LMDB's mtest2.c");
        assert!(lines[1].starts_with("  (commit"), "{w}");
        let output = lines.iter().position(|l| l.starts_with("  mdb.c:1942:")).expect("the output's line");
        assert!(lines[output + 1].starts_with("    ") && lines.last() == Some(&"  short"), "{w}");
        // Words are never cut, and nothing is lost.
        let words = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(words(&w), words(text));
    }

    #[test]
    fn prose_is_wrapped_between_words() {
        let w = wrap("a very-long/word-that-does-not-fit b c d e", 10, "  ");
        assert!(w.contains("very-long/word-that-does-not-fit"), "{w}");
        assert!(w.lines().filter(|l| !l.contains("very-long")).all(|l| l.chars().count() <= 10), "{w}");
        assert_eq!(w.lines().count(), 2, "{w}");
    }
}
