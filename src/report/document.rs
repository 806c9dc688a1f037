//! The one way every command other than `run` and `report` shows its result: the result
//! gives an outline (which text, Markdown, HTML and github lay out) and serialises itself
//! into a JSON document that carries its kind and schema version. A result with charts
//! puts them into the outline's HTML items; nothing renders a format by hand
//! (`report::render_shown` lays a result out in a format).

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::html::Item;
use super::outline::Document;
use super::Format;

/// A command's result, shown in any of [`Format`]'s single-document formats but CSV and SVG.
pub trait Shown: Serialize {
    /// The JSON document's `kind` ("lmdb-regress-history").
    const KIND: &'static str;
    /// Its `schema`, bumped on any change a reader could trip over (CHANGELOG.md).
    const SCHEMA: u32;

    /// The document text, Markdown, HTML and github lay out.
    fn outline(&self) -> Document;

    /// The HTML items of `d` (its outline), with any charts the result draws put in.
    fn html_items<'d>(&self, d: &'d Document) -> Result<Vec<Item<'d>>> {
        super::html::items(d, None)
    }
}

/// The JSON document: `schema` and `kind` first, then the result's own fields.
#[derive(Serialize)]
struct Envelope<'a, S> {
    schema: u32,
    kind: &'static str,
    #[serde(flatten)]
    body: &'a S,
}

/// What a reader checks before it reads the result's fields.
#[derive(Deserialize)]
struct Versioned {
    schema: Option<u32>,
    kind: Option<String>,
}

/// `s` as a JSON document, pretty, ending in a newline.
pub fn json<S: Shown>(s: &S) -> Result<String> {
    let doc = Envelope { schema: S::SCHEMA, kind: S::KIND, body: s };
    Ok(serde_json::to_string_pretty(&doc).with_context(|| format!("cannot serialise the {} document", S::KIND))? + "\n")
}

/// A document [`json`] wrote, of this binary's schema or an older one (files written before
/// documents carried a schema read as the first); `what` names it in errors.
pub fn read<S: Shown + DeserializeOwned>(text: &str, what: &str) -> Result<S> {
    let v: Versioned = serde_json::from_str(text).with_context(|| format!("{what} is not a JSON document"))?;
    if let Some(kind) = v.kind.filter(|k| k != S::KIND) {
        bail!("{what} is a {kind} document, not a {}", S::KIND);
    }
    match v.schema {
        Some(n) if n > S::SCHEMA => {
            bail!(
                "{what} is schema {n} of {}, newer than this binary reads ({}): update lmdb-regress",
                S::KIND,
                S::SCHEMA
            )
        }
        _ => serde_json::from_str(text).with_context(|| format!("{what} is not a {} document", S::KIND)),
    }
}

/// Refuses the formats a [`Shown`] result has not (CSV and SVG): said before the command
/// measures anything.
pub fn refuse_unshown(f: Format) -> Result<()> {
    if matches!(f, Format::Csv | Format::Svg) {
        bail!("--format {} is not one of this command's: give text, markdown, html, json or github", f.name())
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::github::Github;
    use crate::report::render_shown as render;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Answer {
        value: u32,
    }

    impl Shown for Answer {
        const KIND: &'static str = "lmdb-regress-answer";
        const SCHEMA: u32 = 2;
        fn outline(&self) -> Document {
            let mut d = Document::default();
            d.heading(1, "Answer");
            d.para(format!("The value is {}.", self.value));
            d
        }
    }

    #[test]
    fn json_carries_kind_and_schema_first_and_reads_back() {
        let text = json(&Answer { value: 7 }).unwrap();
        assert!(
            text.starts_with("{\n  \"schema\": 2,\n  \"kind\": \"lmdb-regress-answer\",\n  \"value\": 7"),
            "{text}"
        );
        assert_eq!(read::<Answer>(&text, "a.json").unwrap(), Answer { value: 7 });
        assert_eq!(
            read::<Answer>("{\"value\": 3}", "old.json").unwrap(),
            Answer { value: 3 },
            "unversioned is the first"
        );
    }

    #[test]
    fn a_newer_schema_or_another_kind_is_refused() {
        let newer = read::<Answer>("{\"schema\": 3, \"kind\": \"lmdb-regress-answer\", \"value\": 1}", "n.json");
        assert!(newer
            .unwrap_err()
            .to_string()
            .contains("schema 3 of lmdb-regress-answer, newer than this binary reads (2)"));
        let other = read::<Answer>("{\"schema\": 1, \"kind\": \"lmdb-regress-bisect\", \"value\": 1}", "o.json");
        assert!(other.unwrap_err().to_string().contains("o.json is a lmdb-regress-bisect document"));
    }

    #[test]
    fn every_prose_format_lays_out_the_outline_and_csv_is_refused() {
        let a = Answer { value: 7 };
        for f in [Format::Text, Format::Markdown, Format::Html, Format::Github] {
            let out = render(&a, f, &Github::default()).unwrap();
            assert!(out.contains("The value is 7."), "{}: {out}", f.name());
        }
        let e = render(&a, Format::Csv, &Github::default()).unwrap_err().to_string();
        assert!(e.contains("--format csv is not one of this command's"), "{e}");
    }
}
