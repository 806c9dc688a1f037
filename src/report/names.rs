//! Names a user gave (a unit's label: tag, commit, patch, `--source` directory, git ref; the
//! command line) inside the report's own words. A name is marked where the outline puts it
//! ([`name`]); each format renders a marked name its own way, and its own words apart:
//! Markdown as a code span fenced longer than any backtick run inside, text as it is,
//! HTML escaped. Control characters in a name are shown (`\n`), never written, so a name
//! cannot end a table row or a list item and forge the next.

/// Where a marked name starts and ends (Unicode's private use: no name shows them, and
/// [`visible`] escapes any a name holds).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// `s` with every control character (and the marks) shown as an escape: `\n`, `\u{1b}`.
pub fn visible(s: &str) -> String {
    s.chars()
        .map(|c| match c.is_control() || c == OPEN || c == CLOSE {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// A user's name as report text holds it: marked, its control characters shown.
pub fn name(s: &str) -> String {
    format!("{OPEN}{}{CLOSE}", visible(s))
}

/// Each piece of `text`, and whether it is a marked name.
fn pieces(text: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push((false, &rest[..start]));
        let inner = &rest[start + OPEN.len_utf8()..];
        let end = inner.find(CLOSE).unwrap_or(inner.len());
        out.push((true, &inner[..end]));
        rest = inner.get(end + CLOSE.len_utf8()..).unwrap_or("");
    }
    out.push((false, rest));
    out.retain(|(_, s)| !s.is_empty());
    out
}

/// Text without the marks: names as they are (plain text, JSON, and HTML before escaping).
pub fn plain(text: &str) -> String {
    text.chars().filter(|c| *c != OPEN && *c != CLOSE).collect()
}

/// Where Markdown text goes: a table's cell escapes `|` even inside code (GFM reads the
/// row's cells first); prose keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Prose,
    Cell,
}

/// `s` as one Markdown code span: fenced by one backtick more than its longest run of
/// backticks, padded with a space where it starts or ends with one.
pub fn code_span(s: &str, place: Place) -> String {
    let s = visible(&plain(s));
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    let inner = match place {
        Place::Cell => s.replace('|', "\\|"),
        Place::Prose => s,
    };
    format!("{fence}{pad}{inner}{pad}{fence}")
}

/// Our own words in Markdown: HTML's `<` and `&` as entities, `|` escaped, control
/// characters shown; in a cell, which holds no markup of ours, backticks escaped too.
fn words(s: &str, place: Place) -> String {
    let mut o = String::new();
    for c in visible(s).chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '&' => o.push_str("&amp;"),
            '|' => o.push_str("\\|"),
            '`' if place == Place::Cell => o.push_str("\\`"),
            c => o.push(c),
        }
    }
    o
}

/// Report text in Markdown: our words escaped, each name a code span.
pub fn markdown(text: &str, place: Place) -> String {
    pieces(text).into_iter().map(|(is_name, s)| if is_name { code_span(s, place) } else { words(s, place) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_code_span_fenced_longer_than_any_backtick_run_inside() {
        let t = format!("at {} on", name("x``y.patch"));
        assert_eq!(markdown(&t, Place::Prose), "at ```x``y.patch``` on");
        assert_eq!(code_span("`a", Place::Prose), "`` `a ``");
        assert_eq!(code_span("a|b", Place::Cell), "`a\\|b`");
        assert_eq!(plain(&t), "at x``y.patch on");
    }

    #[test]
    fn control_characters_and_markup_never_reach_the_page_raw() {
        let t = format!("{} <b>|", name("p\n| forged | row |\u{E001}`"));
        let md = markdown(&t, Place::Cell);
        assert!(!md.contains('\n') && !md.contains("<b>") && md.contains("&lt;b>"), "{md}");
        assert_eq!(visible("a\tb\u{1b}"), "a\\tb\\u{1b}");
        assert_eq!(pieces(&name("a")), [(true, "a")]);
    }
}
