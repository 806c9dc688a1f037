//! `lmdb-regress tags`: the status of every tag in lmdb-tags.

use anyhow::Result;
use comfy_table::{presets::UTF8_BORDERS_ONLY, ContentArrangement, Table};

use super::args::BuildArgs;
use crate::compile::BuildKind;
use crate::matrix::TagStatus;
use crate::source::Want;

pub fn run(args: &BuildArgs, json: bool) -> Result<()> {
    let m = super::manifest()?;
    let opts = super::matrix_options(args, vec![BuildKind::SharedLibrary])?;
    let wants: Vec<Want> = m.tags.iter().map(Want::Tag).collect();
    let rows = super::build_with_progress(&wants, &opts)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows));
    }
    Ok(())
}

pub fn table(rows: &[TagStatus]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY).set_content_arrangement(ContentArrangement::Dynamic).set_width(160);
    t.set_header(["tag", "status", "provenance", "match", "library / reason"]);
    for r in rows {
        let status = serde_json::to_value(r.status).unwrap().as_str().unwrap_or("").to_string();
        let last = match (&r.library, &r.reason) {
            (Some(l), _) => l.display().to_string(),
            (None, Some(reason)) => reason.clone(),
            (None, None) => String::new(),
        };
        t.add_row([
            r.tag.clone(),
            status,
            r.provenance.clone().unwrap_or_else(|| "-".into()),
            r.matches.map(|m| m.to_string()).unwrap_or_else(|| "-".into()),
            last,
        ]);
    }
    format!("{t}\n")
}
