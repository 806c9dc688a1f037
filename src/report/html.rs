//! One self-contained HTML page: the same outline Markdown and text lay out, block by
//! block, with the charts drawn inline (SVG, `svg.rs`), verdicts coloured from the model,
//! and tables sortable by a few lines of script. Nothing is loaded from anywhere: the
//! style and the script are inline, and a Content-Security-Policy forbids every remote
//! load. Without scripts the page reads the same, unsorted.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::{bail, Result};
use base64::Engine as _;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use sha2::{Digest, Sha256};

use super::cells::{Cells, Judged};
use super::model::ReportModel;
use super::names::plain;
use super::outline::{self, Block, Document};
use super::{Exporter, Output};

pub struct Html;

const STYLE: &str = include_str!("html/style.css");
const SCRIPT: &str = include_str!("html/sort.js");

/// A piece of a page's body: an outline block, or markup made for HTML alone (a chart,
/// a table with links).
pub enum Item<'a> {
    Block(&'a Block),
    Markup(String),
}

pub fn render(m: &ReportModel) -> Result<String> {
    render_document(&outline::report(m), Some(m))
}

/// Any outline as a page; its charts are drawn from `m`, which a document with charts needs.
pub fn render_document(d: &Document, m: Option<&ReportModel>) -> Result<String> {
    Ok(render_items(&items(d, m)?))
}

/// An outline's blocks as page items, its charts drawn from `m`.
pub fn items<'a>(d: &'a Document, m: Option<&ReportModel>) -> Result<Vec<Item<'a>>> {
    let mut items = Vec::with_capacity(d.blocks.len());
    for b in &d.blocks {
        items.push(match b {
            Block::Chart(chart) => {
                let Some(m) = m else { bail!("a chart ({chart:?}) needs the run's model") };
                match super::svg::draw(m, *chart)? {
                    Some(svg) => Item::Markup(figure(&svg) + &levels_toggle(m, *chart)?),
                    None => continue,
                }
            }
            b => Item::Block(b),
        });
    }
    Ok(items)
}

/// A page of items, titled by its first heading.
pub fn render_items(items: &[Item]) -> String {
    let title = items.iter().find_map(|i| match i {
        Item::Block(Block::Heading(_, t)) => Some(t.as_str()),
        _ => None,
    });
    page(&plain(title.unwrap_or("lmdb-regress")), &body(items))
}

/// An inline SVG chart.
pub fn figure(svg: &str) -> String {
    format!("<figure class=\"chart\">\n{}</figure>\n", svg.trim_start())
}

/// Under a workload's chart of ratios, each tag's own level (ms/op with its spread),
/// folded: the tables carry the same figures.
fn levels_toggle(m: &ReportModel, chart: outline::Chart) -> Result<String> {
    let outline::Chart::Section(engine, workload) = chart else { return Ok(String::new()) };
    let Some(s) = m.section(engine, workload).filter(|s| !s.vs_baseline.is_empty()) else { return Ok(String::new()) };
    let svg = super::svg::levels(m, s)?;
    Ok(format!(
        "<details class=\"levels\">\n<summary>Each tag's own {} (median, 95% interval, minimum)</summary>\n\
         <figure class=\"chart levels\">\n{}</figure>\n</details>\n",
        text(m.unit_of(s)),
        svg.trim_start()
    ))
}

/// How every page begins: `site` replaces a file that begins so (a page it wrote) and no other.
const PAGE_START: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
                          <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; ";

/// Whether `bytes` are a page [`page`] wrote.
pub fn is_page(bytes: &[u8]) -> bool {
    bytes.starts_with(PAGE_START.as_bytes())
}

/// The whole page around a body; the policy allows the page's own style and, by its
/// hash, its own script, and nothing else.
pub fn page(title: &str, body: &str) -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
    format!(
        "{PAGE_START}script-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        text(title)
    )
}

/// Headings open nested `<section>`s; the first heading is followed by a table of
/// contents and, when a table carries verdicts, what their colours mean.
pub fn body(items: &[Item]) -> String {
    let mut out = String::new();
    let mut open: Vec<u8> = Vec::new();
    let mut ids = Ids::default();
    let mut contents = Vec::new();
    // Where the contents go: the outline's mark, else after the title.
    let mut mark = None;
    for item in items {
        let b = match item {
            Item::Markup(s) => {
                out.push_str(s);
                continue;
            }
            Item::Block(Block::Contents) => {
                // What comes before the mark is read before the contents: they list what follows.
                contents.clear();
                mark = Some(out.len());
                continue;
            }
            Item::Block(b) => b,
        };
        if let Block::Heading(level, t) = b {
            let t = &plain(t);
            while open.last().is_some_and(|l| l >= level) {
                open.pop();
                out.push_str("</section>\n");
            }
            open.push(*level);
            let id = ids.make(t);
            let _ = writeln!(out, "<section>\n<h{level} id=\"{}\">{}</h{level}>", attr(&id), text(t));
            // Parts, and sections whose title no earlier entry has (the baseline part
            // repeats the workloads' titles).
            if *level == 1 || (*level == 2 && !contents.iter().any(|(_, c)| c == t)) {
                contents.push((id, t.clone()));
            }
            continue;
        }
        block(&mut out, b);
    }
    for _ in open {
        out.push_str("</section>\n");
    }
    let legend = items.iter().any(|i| matches!(i, Item::Block(Block::Table(c)) if c.verdict_col.is_some()));
    // The title is the first entry, unless the mark cleared it with what it heads.
    let listed = if mark.is_some() { &contents[..] } else { contents.get(1..).unwrap_or_default() };
    let top = format!("{}{}", nav(listed), if legend { LEGEND } else { "" });
    match (mark, out.find("</h1>")) {
        (Some(i), _) => out.insert_str(i, &top),
        (None, Some(i)) => out.insert_str(i + "</h1>\n".len(), &top),
        (None, None) => out.insert_str(0, &top),
    }
    out
}

const LEGEND: &str = "<p class=\"legend\">Verdicts: <span class=\"slower\">slower</span> \
     <span class=\"faster\">faster</span> <span class=\"same\">same</span> \
     <span class=\"inconclusive\">inconclusive</span> <span class=\"time-only\">time only</span> \
     (time moved, instructions did not).</p>\n";

fn nav(contents: &[(String, String)]) -> String {
    if contents.len() < 2 {
        return String::new();
    }
    let mut o = String::from("<nav aria-label=\"Contents\">\n<ul>\n");
    for (id, t) in contents {
        let _ = writeln!(o, "<li><a href=\"#{}\">{}</a></li>", attr(id), text(t));
    }
    o.push_str("</ul>\n</nav>\n");
    o
}

/// Heading ids from their words, unique within the page.
#[derive(Default)]
struct Ids(BTreeMap<String, usize>);

impl Ids {
    fn make(&mut self, title: &str) -> String {
        let slug: String = title
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let slug = if slug.is_empty() { "section".to_string() } else { slug };
        let n = self.0.entry(slug.clone()).or_default();
        *n += 1;
        if *n == 1 {
            slug
        } else {
            format!("{slug}-{n}")
        }
    }
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Heading(..) | Block::Chart(..) | Block::Contents => unreachable!("handled by body()"),
        Block::Paragraph(t) => {
            let _ = writeln!(out, "<p>{}</p>", text(&plain(t)));
        }
        Block::Note(t) => {
            let _ = writeln!(out, "<p class=\"note\" role=\"note\"><strong>{}</strong></p>", text(&plain(t)));
        }
        Block::List(items) => {
            out.push_str("<ul>\n");
            for i in items {
                let _ = writeln!(out, "<li>{}</li>", text(&plain(i)));
            }
            out.push_str("</ul>\n");
        }
        Block::Pairs(pairs) => {
            out.push_str("<dl class=\"pairs\">\n");
            for (k, v) in pairs {
                let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", text(&plain(k)), text(&plain(v)));
            }
            out.push_str("</dl>\n");
        }
        Block::Table(c) => out.push_str(&table(c, &[], "")),
        Block::Code(lines) => {
            let _ = writeln!(out, "<pre>{}</pre>", html_escape::encode_text(&lines.join("\n")));
        }
    }
}

/// The classes of a verdict cell: the verdict's word, and `time-only` beside it.
fn verdict_class(j: &Judged) -> String {
    let mut c = j.verdict.word().to_string();
    if j.time_only {
        c.push_str(" time-only");
    }
    c
}

/// A sortable table in a box that scrolls sideways on a narrow screen. `links[i]`, when
/// given, makes row i's tag cell a link; `class` is added to the table's.
pub fn table(c: &Cells, links: &[Option<String>], class: &str) -> String {
    let mut o = String::from("<div class=\"scroll\" tabindex=\"0\">\n");
    let classes = if class.is_empty() { "sortable".to_string() } else { format!("sortable {class}") };
    let _ = writeln!(o, "<table class=\"{}\">\n<thead>\n<tr>", attr(&classes));
    for (i, h) in c.header.iter().enumerate() {
        let class = match (i == c.tag_col, i >= c.text_cols) {
            (true, _) => " class=\"tag\"",
            (false, true) => " class=\"num\"",
            (false, false) => "",
        };
        let _ = write!(o, "<th scope=\"col\"{class}>{}</th>", text(&plain(h)));
    }
    o.push_str("</tr>\n</thead>\n<tbody>\n");
    for (r, row) in c.rows.iter().enumerate() {
        let newest = c.highlight.get(r).copied().unwrap_or(false);
        o.push_str(if newest { "<tr class=\"newest\">" } else { "<tr>" });
        for (i, v) in row.iter().enumerate() {
            let mut classes = Vec::new();
            if i >= c.text_cols {
                classes.push("num".to_string());
            }
            if i == c.tag_col {
                classes.push("tag".into());
            }
            if Some(i) == c.verdict_col {
                classes.push("verdict".into());
                if let Some(j) = c.judged.get(r).copied().flatten() {
                    classes.push(verdict_class(&j));
                }
            }
            let class = if classes.is_empty() { String::new() } else { format!(" class=\"{}\"", classes.join(" ")) };
            let content = match links.get(r).cloned().flatten().filter(|_| i == c.tag_col) {
                Some(href) => format!("<a href=\"{}\">{}</a>", attr(&href), text(&plain(v))),
                None => text(&plain(v)).into_owned(),
            };
            let _ = write!(o, "<td{class}>{content}</td>");
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n</div>\n");
    o
}

impl Exporter for Html {
    fn export(&self, m: &ReportModel) -> Result<Vec<Output>> {
        Ok(vec![Output { suffix: ".html".into(), bytes: render(m)?.into_bytes() }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_everywhere() {
        let mut d = Document::default();
        d.heading(1, "<script>alert(1)</script>");
        d.para("a < b & \"c\"");
        d.blocks.push(Block::Pairs(vec![("<k>".into(), "<v>".into())]));
        let mut c = Cells::new(&["<th>", "x"], 0, 1);
        c.push(vec!["<td>".into(), "1".into()], false);
        d.table(c.clone());
        let page = render_document(&d, None).unwrap();
        let inside = &page[page.find("<main>").unwrap()..page.find("</main>").unwrap()];
        assert!(!inside.contains("<script>") && !inside.contains("<th>") && !inside.contains("<td><"), "{inside}");
        assert!(inside.contains("a &lt; b &amp; \"c\"") && inside.contains("&lt;v&gt;"), "{inside}");
        let linked = table(&c, &[Some("x\" onclick=\"y".into())], "");
        assert!(linked.contains("href=\"x&quot; onclick=&quot;y\""), "{linked}");
    }

    #[test]
    fn headings_nest_into_sections_with_unique_ids() {
        let mut d = Document::default();
        d.heading(1, "Title");
        d.heading(2, "Write Entry");
        d.para("a");
        d.heading(1, "Against 0.9.17");
        d.heading(2, "Write Entry");
        let b = body(&d.blocks.iter().map(Item::Block).collect::<Vec<_>>());
        assert_eq!(b.matches("<section>").count(), 4);
        assert_eq!(b.matches("</section>").count(), 4);
        assert!(b.contains("id=\"write-entry\"") && b.contains("id=\"write-entry-2\""), "{b}");
        assert!(b.contains("<a href=\"#against-0-9-17\">"), "{b}");
    }

    #[test]
    fn the_policy_names_the_script_it_allows() {
        let p = page("t", "");
        let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
        assert!(p.contains(&format!("script-src 'sha256-{hash}'")) && p.contains("default-src 'none'"));
        assert!(p.contains(&format!("<script>{SCRIPT}</script>")));
    }

    #[test]
    fn a_chart_without_a_model_is_an_error() {
        let mut d = Document::default();
        d.chart(crate::record::Engine::Rust, crate::workload::Workload::Write);
        assert!(render_document(&d, None).unwrap_err().to_string().contains("needs the run's model"));
    }
}
