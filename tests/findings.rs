//! Findings, the summary every report opens with: golden in text (80 columns) and Markdown
//! for three fixed runs (testdata/make-findings-runs.py): a resolved step, a time-only
//! difference, nothing resolved; the same sentences first in JSON and on the HTML page.

use lmdb_regress::record;
use lmdb_regress::report::findings::{self, Findings};
use lmdb_regress::report::{markdown, model, names, outline, text};

use crate::common::*;

fn model_of(name: &str) -> model::ReportModel {
    let data = record::load(&testdata(&format!("findings-{name}.jsonl"))).unwrap();
    model::build(&data, None).unwrap()
}

/// The findings of `name` match their golden files; returns them as values.
fn golden_findings(name: &str) -> Findings {
    let m = model_of(name);
    let section = outline::findings_section(&m);
    golden(&format!("findings-{name}.txt"), &text::render_document(&section));
    golden(&format!("findings-{name}.md"), &markdown::render_document(&section));
    // What every format opens with: the same sentences.
    let lines: Vec<String> = outline::findings(&m).iter().map(|l| names::plain(l)).collect();
    let file = testdata(&format!("findings-{name}.jsonl"));
    let json = json(&run_ok(lmdb_regress().arg("report").arg(&file).args(["--format", "json"])));
    assert_eq!(json["findings"]["lines"], serde_json::json!(lines), "{name}");
    let md = stdout(&run_ok(lmdb_regress().arg("report").arg(&file)));
    let opening = md.split("\n\n").nth(1).unwrap_or_default();
    assert_eq!(opening, "## Findings", "the report opens with its findings:\n{md}");
    let html = stdout(&run_ok(lmdb_regress().arg("report").arg(&file).args(["--format", "html"])));
    let (at, nav) = (html.find("id=\"findings\"").unwrap(), html.find("<nav").unwrap());
    assert!(at < nav && html.find("<h1").unwrap() < at, "findings right under the title, the contents after them");
    for l in &lines {
        assert!(html.contains(&format!("<li>{}</li>", html_escape::encode_text(l))), "{l}");
    }
    Findings::of(&m)
}

#[test]
fn a_step_shared_by_consecutive_tags_is_one_finding() {
    let f = golden_findings("step");
    assert_eq!(f.steps.len(), 1, "{f:#?}");
    let s = &f.steps[0];
    assert_eq!((s.workload.name(), s.by), ("write", findings::StepBy::Instructions));
    let tags: Vec<String> = s.deltas.iter().map(|d| d.tag.to_string()).collect();
    assert_eq!(tags, ["LMDB_0.9.21", "LMDB_0.9.22", "LMDB_0.9.23"]);
    assert!(s.to_last);
    assert_eq!(s.not_measured, ["LMDB_0.9.19", "LMDB_0.9.20"]);
    for d in &s.deltas {
        let i = d.instructions().unwrap();
        assert!((i.ratio - 1.233).abs() < 0.001, "{d:?}");
        assert_eq!(d.verdict(), lmdb_regress::stats::Verdict::Slower);
    }
}

#[test]
fn a_time_only_difference_says_instructions_did_not_move() {
    let f = golden_findings("time-only");
    assert_eq!(f.steps.len(), 1, "{f:#?}");
    let s = &f.steps[0];
    assert_eq!((s.workload.name(), s.by), ("readSeq", findings::StepBy::Time));
    assert!(s.deltas.iter().all(|d| d.time_only && d.verdict() == lmdb_regress::stats::Verdict::Faster));
    // 0.9.21 measured between: the step lies after it, nothing unmeasured in between.
    assert_eq!(s.deltas[0].tag.to_string(), "LMDB_0.9.22");
    assert!(s.not_measured.is_empty());
    // Read as a run that ended comparisons early at looks: each comparison, decided at the
    // first look (round 11, the fewest pairs reaching its level in a family of 4 in each
    // of the run's 2 tables), is reported there, on the rounds up to it, at that look's
    // level; the same file without looks reports every interval on all 12 rounds at the
    // run's 95%.
    let looked_run = looked_model("time-only");
    let plain = model_of("time-only");
    let section = |m: &model::ReportModel| m.sections.iter().find(|s| s.workload.name() == "readSeq").cloned().unwrap();
    let (looked, plain) = (section(&looked_run), section(&plain));
    let levels = |s: &model::Section| -> Vec<f64> {
        s.vs_baseline.iter().filter_map(|r| r.vs_baseline.as_ref()).map(|d| d.comparison.confidence).collect()
    };
    let first_look = 1.0 - 0.05 / 2.0 / 2.0 / 8.0;
    assert_eq!(levels(&plain), [1.0 - 0.05 / 8.0; 4]);
    assert_eq!(levels(&looked), [first_look; 4]);
    assert!(looked.stopped_early.iter().all(|x| (x.round, x.confidence) == (11, first_look)), "{looked:?}");
    assert_eq!(looked.stopped_early.len(), 4);
    for (l, p) in looked
        .vs_baseline
        .iter()
        .zip(&plain.vs_baseline)
        .filter_map(|(l, p)| Some((l.vs_baseline.as_ref()?, p.vs_baseline.as_ref()?)))
    {
        assert_eq!((l.comparison.n, p.comparison.n), (11, 12), "the rounds up to the look: {l:?}");
        assert_eq!(l.verdict(), p.verdict());
    }
    let md = lmdb_regress::report::render(&looked_run, lmdb_regress::report::Format::Markdown).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("`LMDB_0.9.18` at round 11 (99.84%)"), "{md}");
}

/// The fixed run `name` as if it had ended comparisons early at looks (adaptive rounds).
fn looked_model(name: &str) -> model::ReportModel {
    let text = std::fs::read_to_string(testdata(&format!("findings-{name}.jsonl"))).unwrap();
    let (head, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(head).unwrap();
    header["plan"]["adaptive"] = "on".into();
    header["plan"]["stopping"] = "looks".into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, format!("{header}\n{rest}")).unwrap();
    model::build(&record::load(&path).unwrap(), None).unwrap()
}

#[test]
fn nothing_resolved_says_so_and_what_more_rounds_would_resolve() {
    // Two tables share the run's error: each of a table's 4 comparisons at 1 − 0.05/8,
    // which 8 rounds cannot reach, so no interval exists and nothing projects.
    let f = golden_findings("none");
    assert!(f.steps.is_empty(), "{f:#?}");
    assert_eq!(f.unresolved.len(), 2);
    for u in &f.unresolved {
        assert_eq!((u.rounds, u.resolution, u.rounds_to_resolve), (8, None, None), "{u:?}");
        assert!(u.rounds_for_intervals > 8, "{u:?}");
    }
    assert_eq!(f.seconds_per_round, Some(10.0));
    // One workload of the same run is one table, at 1 − 0.05/4: intervals exist, and
    // narrow as 1/√rounds, so the projection reaches ±2% from the resolution.
    let dir = tempfile::tempdir().unwrap();
    let readseq = one_workload(dir.path(), "findings-none.jsonl", "readSeq");
    let one = Findings::of(&model::build(&record::load(&readseq).unwrap(), None).unwrap());
    let u = &one.unresolved[..];
    assert_eq!(u.len(), 1, "{one:#?}");
    let want = (8.0 * (u[0].resolution.unwrap() / 0.02).powi(2)).ceil() as usize;
    assert_eq!((u[0].rounds, u[0].rounds_to_resolve), (8, Some(want)), "{u:?}");
}
