//! The HTML report in a real browser: Debian's chromium (`make deps-test` installs it), headless,
//! driven over the DevTools protocol through its debugging pipe (tests/common/cdp.rs). The
//! page is the golden one,
//! testdata/golden/run-fixed.html, which tests/reports.rs keeps equal to what `report
//! --format html` renders from testdata/run-fixed.jsonl. Checked as a reader would meet it:
//! no console errors; every section and every table row of the fixed run, with scripts on
//! and off; no request leaving the file; a click on a column header reorders the rows;
//! print media hides the contents and unrolls the tables; every workload's chart draws
//! the model's own interval for each compared tag against a line at 1.0; screenshots at
//! 390 and 1280 px wide that are not blank, of the first screen and of the write chart.
//! A run of seventeen tags (testdata/run-many-tags.jsonl, its page rendered here) holds
//! the same intervals, and its charts' tag labels stand upright, none overlapping
//! another, large enough to read at either width, the newest tag marked, the axis in
//! percent, each point in its verdict's colour.
//!
//! The screenshots are written to target/tmp/screenshots/ for people to look at, and
//! committed as testdata/golden/run-fixed-{390,1280}{,-write}.png and
//! run-many-tags-{390,1280}-write.png: two runs of the same chromium
//! give the same bytes. Rendering differs between chromium releases (Debian updates its
//! chromium often), so the pictures are compared only when the running chromium is the
//! one named in testdata/golden/screenshots-chromium.txt, and then allowing 3% of pixels
//! to differ visibly (text smoothing may differ with the CPU; a moved table would not stay
//! under that); with any other release the screenshots are still taken and checked for
//! size and content, and the test says it did not compare them. `UPDATE_GOLDEN=1`
//! rewrites them all and the stamp.
//!
//! If chromium is missing or cannot start, every test here fails and says why.

#[path = "common/cdp.rs"]
mod cdp;

use std::path::{Path, PathBuf};

use cdp::{Chromium, Tab};
use lmdb_regress::report::names::plain;
use lmdb_regress::report::outline::{self, Block, Chart};
use serde_json::json;

fn testdata(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(p)
}

fn chromium() -> Chromium {
    let path = std::env::var_os("LMDB_REGRESS_CHROMIUM").map(PathBuf::from).unwrap_or("/usr/bin/chromium".into());
    assert!(
        path.exists(),
        "no chromium at {}: `make deps-test` (scripts/install-deps.sh) installs Debian's chromium; \
         LMDB_REGRESS_CHROMIUM names another binary",
        path.display()
    );
    let flags = [
        "--disable-quic",
        "--disable-component-update",
        "--disable-background-networking",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-color-profile=srgb",
        "--window-size=1280,800",
    ];
    Chromium::launch(&path, &flags).unwrap_or_else(|e| panic!("chromium ({}) cannot start: {e}", path.display()))
}

/// Everything the page asked for and every error it reported.
#[derive(Default, Debug)]
struct Seen {
    requests: Vec<String>,
    errors: Vec<String>,
}

/// Turns on the events a reader's problems show up in: requests, log entries, console calls.
fn watch(tab: &Tab) {
    for domain in ["Network", "Log", "Runtime"] {
        tab.call(&format!("{domain}.enable"), json!({}));
    }
}

fn seen(tab: &Tab) -> Seen {
    let mut s = Seen::default();
    for e in tab.events() {
        let p = &e["params"];
        match e["method"].as_str().unwrap_or_default() {
            "Network.requestWillBeSent" => s.requests.push(p["request"]["url"].as_str().unwrap_or_default().into()),
            "Log.entryAdded" if p["entry"]["level"] == "error" => s.errors.push(format!("log: {}", p["entry"]["text"])),
            "Runtime.consoleAPICalled" if p["type"] == "error" || p["type"] == "assert" => {
                let args: Vec<&serde_json::Value> =
                    p["args"].as_array().into_iter().flatten().map(|a| &a["value"]).collect();
                s.errors.push(format!("console: {args:?}"))
            }
            "Runtime.exceptionThrown" => s.errors.push(format!("exception: {}", p["exceptionDetails"])),
            _ => {}
        }
    }
    s
}

fn url(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

const DOM: &str = r#"{
  headings: [...document.querySelectorAll("main h1, main h2, main h3")].map(h => h.textContent),
  tables: [...document.querySelectorAll("main table")].map(t => ({
    header: [...t.tHead.rows[0].cells].map(c => c.textContent),
    rows: [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent)),
  })),
  pairs: [...document.querySelectorAll("main dl.pairs dt")].map(d => d.textContent),
  items: [...document.querySelectorAll("main section > ul > li")].map(d => d.textContent),
  charts: [...document.querySelectorAll("main figure.chart:not(.levels) svg")].map(s => s.querySelectorAll("circle > title").length),
  links: [...document.querySelectorAll("[src], [href]")].map(e => e.getAttribute("src") || e.getAttribute("href")),
}"#;

/// The fixed run's outline, as the page must show it (a user's names unmarked, as read).
fn expected() -> serde_json::Value {
    let data = lmdb_regress::record::load(&testdata("run-fixed.jsonl")).unwrap();
    let model = lmdb_regress::report::model::build(&data, None).unwrap();
    let d = outline::report(&model);
    let (mut headings, mut tables, mut pairs, mut items, mut charts) = (vec![], vec![], vec![], vec![], vec![]);
    for b in &d.blocks {
        match b {
            Block::Heading(_, t) => headings.push(plain(t)),
            Block::Table(c) => {
                let rows: Vec<Vec<String>> = c.rows.iter().map(|r| r.iter().map(|v| plain(v)).collect()).collect();
                let header: Vec<String> = c.header.iter().map(|h| plain(h)).collect();
                tables.push(serde_json::json!({ "header": header, "rows": rows }))
            }
            Block::Pairs(p) => pairs.extend(p.iter().map(|(k, _)| plain(k))),
            Block::List(l) => items.extend(l.iter().map(|i| plain(i))),
            Block::Chart(Chart::Section(e, w)) => charts.push(model.section(*e, *w).unwrap().ranked.len()),
            // A preset's whisker charts carry no point tooltips.
            Block::Chart(Chart::Extra(_)) => charts.push(0),
            Block::Paragraph(_) | Block::Note(_) | Block::Code(_) | Block::Contents => {}
        }
    }
    serde_json::json!({ "headings": headings, "tables": tables, "pairs": pairs, "items": items, "charts": charts })
}

fn assert_holds_the_run(dom: &serde_json::Value, want: &serde_json::Value) {
    for k in ["headings", "tables", "pairs", "items", "charts"] {
        assert_eq!(dom[k], want[k], "{k} on the page differ from the fixed run's outline");
    }
    assert!(want["tables"].as_array().unwrap().len() >= 5 && want["charts"].as_array().unwrap().len() == 2);
    // In-page anchors only: nothing to load from elsewhere.
    for l in dom["links"].as_array().unwrap() {
        assert!(l.as_str().unwrap().starts_with('#'), "a reference that leaves the page: {l}");
    }
}

#[test]
fn the_report_renders_without_errors_holds_every_row_and_loads_nothing() {
    let c = chromium();
    let tab = c.new_tab();
    watch(&tab);
    let page = url(&testdata("golden/run-fixed.html"));
    tab.navigate(&page);
    let dom = tab.eval(DOM);
    assert_holds_the_run(&dom, &expected());
    let seen = seen(&tab);
    assert!(seen.errors.is_empty(), "console errors: {:?}", seen.errors);
    assert_eq!(seen.requests, vec![page.clone()], "requests besides the page itself");
    // The script ran (the policy allowed it by its hash): headers became sort buttons.
    assert_eq!(
        tab.eval("document.querySelectorAll('th > button').length"),
        tab.eval("document.querySelectorAll('th').length")
    );
}

#[test]
fn the_watch_sees_requests_and_errors() {
    // The same watch on a page that does load something and does fail: it must see both,
    // or its silence above would prove nothing. The address is a closed loopback port.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("leaky.html");
    std::fs::write(
        &p,
        "<!DOCTYPE html><img src=\"http://127.0.0.1:9/probe.png\"><script>console.error('boom')</script>",
    )
    .unwrap();
    let c = chromium();
    let tab = c.new_tab();
    watch(&tab);
    tab.navigate(&url(&p));
    tab.eval("1");
    let seen = seen(&tab);
    assert!(seen.requests.iter().any(|r| r.starts_with("http://127.0.0.1:9/")), "{seen:?}");
    assert!(seen.errors.iter().any(|e| e.contains("boom")), "{seen:?}");
}

#[test]
fn without_scripts_every_row_is_there() {
    let c = chromium();
    let tab = c.new_tab();
    tab.call("Emulation.setScriptExecutionDisabled", json!({ "value": true }));
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    // Evaluating from DevTools still works with the page's scripts off.
    assert_holds_the_run(&tab.eval(DOM), &expected());
    assert_eq!(tab.eval("document.querySelectorAll('th > button').length"), 0);
}

fn column(tab: &Tab, col: usize) -> Vec<String> {
    let js = format!("[...document.querySelector('main table').tBodies[0].rows].map(r => r.cells[{col}].textContent)");
    serde_json::from_value(tab.eval(&js)).unwrap()
}

#[test]
fn clicking_a_header_sorts_its_rows() {
    let c = chromium();
    let tab = c.new_tab();
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    // The first table ranks readSeq by the paired estimate: neither tag nor median order.
    assert_eq!(column(&tab, 1), ["LMDB_0.9.33", "LMDB_0.9.17", "LMDB_0.9.18"]);
    let header = |n: usize| format!("main table th:nth-child({n}) button");
    tab.click(&header(2));
    assert_eq!(column(&tab, 1), ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.33"]);
    tab.click(&header(2));
    assert_eq!(column(&tab, 1), ["LMDB_0.9.33", "LMDB_0.9.18", "LMDB_0.9.17"]);
    // By a figure: whole rows move, each tag keeps its own median and minimum.
    tab.click(&header(3));
    assert_eq!(column(&tab, 2), ["19.026", "20.014", "20.056"]);
    assert_eq!(column(&tab, 1), ["LMDB_0.9.33", "LMDB_0.9.18", "LMDB_0.9.17"]);
    assert_eq!(column(&tab, 4), ["18.819", "19.774", "19.707"]);
    assert_eq!(tab.eval("document.querySelector('main table th:nth-child(3)').getAttribute('aria-sort')"), "ascending");
}

#[test]
fn print_media_unrolls_tables_and_hides_the_contents() {
    let c = chromium();
    let tab = c.new_tab();
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    tab.call("Emulation.setEmulatedMedia", json!({ "media": "print" }));
    assert_eq!(tab.eval("getComputedStyle(document.querySelector('nav')).display"), "none");
    assert_eq!(tab.eval("getComputedStyle(document.querySelector('.scroll')).overflowX"), "visible");
    let pdf = tab.print_to_pdf();
    assert!(pdf.starts_with(b"%PDF") && pdf.len() > 10_000, "{} bytes", pdf.len());
}

/// Per chart of a workload: each interval's tag and ends (as the SVG's data attributes
/// say), how many reference lines sit at ratio 1, and whether each lies inside the band.
const CHARTS: &str = r#"[...document.querySelectorAll("main figure.chart:not(.levels) svg")].map(s => ({
  intervals: [...s.querySelectorAll("g.interval")].map(g => [g.dataset.label, g.dataset.lo, g.dataset.hi]),
  references: [...s.querySelectorAll("line.reference")].map(l => {
    const band = s.querySelector("rect.same-band").getBBox(), y = l.getBBox().y;
    return { ratio: l.dataset.ratio, in_band: band.y < y && y < band.y + band.height };
  }),
}))"#;

/// The model of a run file under testdata/.
fn model_of(run: &str) -> lmdb_regress::report::model::ReportModel {
    let data = lmdb_regress::record::load(&testdata(run)).unwrap();
    lmdb_regress::report::model::build(&data, None).unwrap()
}

/// Per workload chart of `model`, what [`CHARTS`] must find: the model's interval for each
/// compared tag, and one reference line at 1.0 inside the `same` band.
fn intervals_and_references(model: &lmdb_regress::report::model::ReportModel) -> Vec<serde_json::Value> {
    model
        .sections
        .iter()
        .map(|s| {
            let intervals: Vec<[String; 3]> = s
                .vs_baseline
                .iter()
                .filter_map(|b| {
                    let ci = b.vs_baseline.as_ref()?.comparison.ci?;
                    let tag = b.tag.to_string().trim_start_matches("LMDB_").to_string();
                    Some([tag, ci.lo.to_string(), ci.hi.to_string()])
                })
                .collect();
            json!({ "intervals": intervals, "references": [{ "ratio": "1", "in_band": true }] })
        })
        .collect()
}

/// The page of seventeen tags, rendered from its run file (no golden HTML: the fixed
/// run's is the one tests/reports.rs keeps).
fn many_tags_page() -> PathBuf {
    let html = lmdb_regress::report::html::render(&model_of("run-many-tags.jsonl")).unwrap();
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join("run-many-tags.html");
    std::fs::write(&p, html).unwrap();
    p
}

#[test]
fn every_workload_chart_draws_the_models_interval_per_compared_tag_against_one() {
    let want = intervals_and_references(&model_of("run-fixed.jsonl"));
    assert!(want.iter().all(|c| c["intervals"].as_array().unwrap().len() == 2), "{want:?}");
    let c = chromium();
    let tab = c.new_tab();
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    assert_eq!(tab.eval(CHARTS), serde_json::Value::from(want));
    // Each tag's own level stays on the page, folded under its chart.
    assert_eq!(tab.eval("document.querySelectorAll('main details.levels:not([open]) svg').length"), 2);
    let many = intervals_and_references(&model_of("run-many-tags.jsonl"));
    assert!(many.iter().all(|c| c["intervals"].as_array().unwrap().len() == 16), "{many:?}");
    tab.navigate(&url(&many_tags_page()));
    assert_eq!(tab.eval(CHARTS), serde_json::Value::from(many));
}

/// Per workload chart as the reader sees it: each tag label's box on the screen and its
/// rendered font size, the newest tag's shading and label weight, the y axis' labels, and
/// each estimate's verdict class and fill.
const READING: &str = r#"[...document.querySelectorAll("main figure.chart:not(.levels) svg")].map(s => {
  const scale = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
  return {
    labels: [...s.querySelectorAll("text.axis-label")].map(t => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
               px: parseFloat(t.getAttribute("font-size")) * scale, bold: t.getAttribute("font-weight") === "bold" };
    }),
    newest: [...s.querySelectorAll("rect.newest")].map(r => r.dataset.label),
    band: s.querySelectorAll("rect.same-band").length,
    percents: [...s.querySelectorAll("text")].map(t => t.textContent.trim()).filter(t => /^([+-]\d+(\.\d+)?%|0)$/.test(t)),
    estimates: [...s.querySelectorAll("circle.estimate")].map(c => [c.getAttribute("class"), c.getAttribute("stroke")]),
  };
})"#;

#[test]
fn seventeen_tags_read_at_phone_and_laptop_width() {
    let model = model_of("run-many-tags.jsonl");
    let c = chromium();
    let tab = c.new_tab();
    tab.navigate(&url(&many_tags_page()));
    for width in [390, 1280] {
        screenshot(&tab, width, 800);
        let charts = tab.eval(READING);
        let charts = charts.as_array().unwrap();
        assert_eq!(charts.len(), model.sections.len(), "at {width} px");
        for (chart, s) in charts.iter().zip(&model.sections) {
            let labels = chart["labels"].as_array().unwrap();
            let texts: Vec<&str> = labels.iter().map(|l| l["text"].as_str().unwrap()).collect();
            let want: Vec<String> =
                s.vs_baseline.iter().map(|b| b.tag.to_string().trim_start_matches("LMDB_").to_string()).collect();
            assert_eq!(texts, want, "{} at {width} px: one label per tag, in release order", s.workload);
            let f = |l: &serde_json::Value, k: &str| l[k].as_f64().unwrap();
            for (a, b) in labels.iter().zip(labels.iter().skip(1)) {
                assert!(f(a, "right") <= f(b, "left"), "{} at {width} px: {a} overlaps {b}", s.workload);
            }
            for l in labels {
                assert!(f(l, "px") >= 8.0, "{} at {width} px: {l} is too small to read", s.workload);
                assert_eq!(l["bold"], l["text"] == "0.9.33", "{} at {width} px: only the newest tag bold", s.workload);
            }
            assert_eq!(chart["newest"], json!(["0.9.33"]), "{}", s.workload);
            assert_eq!(chart["band"], 1, "{}: the same band", s.workload);
            let percents = chart["percents"].as_array().unwrap();
            assert!(percents.iter().any(|p| p == "0") && percents.len() >= 3, "{}: {percents:?}", s.workload);
            // Each estimate in its verdict's colour: one colour per verdict, told apart.
            let mut colours: std::collections::BTreeMap<String, String> = Default::default();
            for e in chart["estimates"].as_array().unwrap() {
                let (class, stroke) = (e[0].as_str().unwrap().to_string(), e[1].as_str().unwrap().to_string());
                assert_eq!(colours.entry(class.clone()).or_insert(stroke.clone()), &stroke, "{}", s.workload);
            }
            let distinct: std::collections::BTreeSet<&String> = colours.values().collect();
            assert_eq!(distinct.len(), colours.len(), "{}: {colours:?}", s.workload);
        }
    }
}

/// A screenshot of the first screen at `width` × `height`, as a phone or a laptop shows it.
fn screenshot(tab: &Tab, width: u32, height: u32) -> Vec<u8> {
    tab.call(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600 }),
    );
    tab.screenshot()
}

/// Width, height, and the share of pixels that differ from the top-left one (the page's
/// white), and how many colours there are.
/// A PNG's width, height, samples per pixel and pixel bytes.
fn decode(png_bytes: &[u8]) -> (u32, u32, usize, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type.samples(), buf)
}

/// The share of pixels that differ visibly (by more than 32 in a channel): anti-aliasing
/// may differ by CPU, a moved table or chart may not.
fn changed_pixels(a: &[u8], b: &[u8]) -> f64 {
    let ((wa, ha, pa, xa), (wb, hb, pb, xb)) = (decode(a), decode(b));
    if (wa, ha, pa) != (wb, hb, pb) {
        return 1.0;
    }
    let differ = xa.chunks(pa).zip(xb.chunks(pb)).filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > 32));
    differ.count() as f64 / (wa as f64 * ha as f64)
}

fn content(png_bytes: &[u8]) -> (u32, u32, f64, usize) {
    let (width, height, px, buf) = decode(png_bytes);
    let pixels: Vec<&[u8]> = buf.chunks(px).collect();
    let inked = pixels.iter().filter(|p| **p != pixels[0]).count() as f64 / pixels.len() as f64;
    let mut colours: Vec<&[u8]> = pixels.clone();
    colours.sort();
    colours.dedup();
    (width, height, inked, colours.len())
}

/// Where screenshots go and what they are held against: their golden files, compared
/// only under the chromium that made them, or rewritten with `UPDATE_GOLDEN=1`.
struct Goldens {
    out: PathBuf,
    version: String,
    update: bool,
    same_chromium: bool,
}

impl Goldens {
    fn of(c: &Chromium) -> Goldens {
        let version = c.version();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
        std::fs::create_dir_all(&out).unwrap();
        let same_chromium = std::fs::read_to_string(Self::stamp()).is_ok_and(|s| s.trim() == version);
        Goldens { out, version, update: std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1"), same_chromium }
    }

    fn stamp() -> PathBuf {
        testdata("golden/screenshots-chromium.txt")
    }

    /// Checks a screenshot of `width` × `height` is not blank and, under the same
    /// chromium, that it matches its golden file (or rewrites that).
    fn check(&self, name: &str, shot: &[u8], (width, height): (u32, u32)) {
        std::fs::write(self.out.join(name), shot).unwrap();
        let (w, h, inked, colours) = content(shot);
        assert_eq!((w, h), (width, height), "{name}");
        assert!(inked > 0.03 && colours > 16, "{name} looks blank: {:.1}% inked, {colours} colours", 100.0 * inked);
        let golden = testdata(&format!("golden/{name}"));
        if self.update {
            std::fs::write(&golden, shot).unwrap();
        } else if self.same_chromium {
            let want = std::fs::read(&golden).unwrap();
            // Byte-identical on the machine that made it; elsewhere text may be smoothed
            // differently, so a few per cent of pixels may move, not the layout.
            let changed = changed_pixels(&want, shot);
            assert!(
                changed <= 0.03,
                "{name}: {:.1}% of pixels differ from its golden file under the same {}; look at {} and rewrite with UPDATE_GOLDEN=1",
                changed * 100.0,
                self.version,
                self.out.join(name).display()
            );
        } else {
            // Said, not silent: another chromium renders fonts differently, so only the
            // checks above apply.
            eprintln!("{name}: not compared with its golden file (made by another chromium than {})", self.version);
        }
    }

    fn stamped(&self) {
        if self.update {
            std::fs::write(Self::stamp(), format!("{}\n", self.version)).unwrap();
        }
    }
}

/// The page's first screen and its write chart at the top of the screen (its step must
/// read at either width), at phone and laptop width, named `stem-WIDTH{,-write}.png`.
fn shoot(tab: &Tab, goldens: &Goldens, stem: &str, first_screen: bool) {
    for (width, height) in [(390, 844), (1280, 800)] {
        tab.eval("window.scrollTo(0, 0)");
        let shot = screenshot(tab, width, height);
        // Nothing of the page is cut off sideways: wide tables scroll inside their own box.
        let overflow = tab.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth");
        assert_eq!(overflow, 0, "{stem} scrolls sideways at {width} px");
        if first_screen {
            goldens.check(&format!("{stem}-{width}.png"), &shot, (width, height));
        }
        tab.eval("document.querySelectorAll('main figure.chart:not(.levels)')[1].scrollIntoView()");
        goldens.check(&format!("{stem}-{width}-write.png"), &screenshot(tab, width, height), (width, height));
    }
}

#[test]
fn screenshots_at_phone_and_laptop_width_are_not_blank() {
    let c = chromium();
    let goldens = Goldens::of(&c);
    let tab = c.new_tab();
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    shoot(&tab, &goldens, "run-fixed", true);
    tab.navigate(&url(&many_tags_page()));
    shoot(&tab, &goldens, "run-many-tags", false);
    goldens.stamped();
}
