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
//!
//! The screenshots are written to target/tmp/screenshots/ for people to look at, and
//! committed as testdata/golden/run-fixed-{390,1280}{,-write}.png: two runs of the same chromium
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
    let data = lmdb_regress::runner::runfile::load(&testdata("run-fixed.jsonl")).unwrap();
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

#[test]
fn every_workload_chart_draws_the_models_interval_per_compared_tag_against_one() {
    let data = lmdb_regress::runner::runfile::load(&testdata("run-fixed.jsonl")).unwrap();
    let model = lmdb_regress::report::model::build(&data, None).unwrap();
    let want: Vec<serde_json::Value> = model
        .sections
        .iter()
        .map(|s| {
            let intervals: Vec<[String; 3]> = s
                .vs_baseline
                .iter()
                .filter_map(|b| {
                    let ci = b.vs_baseline.as_ref()?.comparison.ci?;
                    let tag = b.tag.strip_prefix("LMDB_").unwrap_or(&b.tag).to_string();
                    Some([tag, ci.lo.to_string(), ci.hi.to_string()])
                })
                .collect();
            json!({ "intervals": intervals, "references": [{ "ratio": "1", "in_band": true }] })
        })
        .collect();
    assert!(want.iter().all(|c| c["intervals"].as_array().unwrap().len() == 2), "{want:?}");
    let c = chromium();
    let tab = c.new_tab();
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    assert_eq!(tab.eval(CHARTS), serde_json::Value::from(want));
    // Each tag's own level stays on the page, folded under its chart.
    assert_eq!(tab.eval("document.querySelectorAll('main details.levels:not([open]) svg').length"), 2);
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

#[test]
fn screenshots_at_phone_and_laptop_width_are_not_blank() {
    let c = chromium();
    let version = c.version();
    let tab = c.new_tab();
    tab.navigate(&url(&testdata("golden/run-fixed.html")));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&out).unwrap();
    let stamp = testdata("golden/screenshots-chromium.txt");
    let update = std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1");
    let same_chromium = std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == version);
    for (width, height) in [(390, 844), (1280, 800)] {
        tab.eval("window.scrollTo(0, 0)");
        let shot = screenshot(&tab, width, height);
        // Nothing of the page is cut off sideways: wide tables scroll inside their own box.
        let overflow = tab.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth");
        assert_eq!(overflow, 0, "the page scrolls sideways at {width} px");
        let check = |name: String, shot: Vec<u8>| {
            std::fs::write(out.join(&name), &shot).unwrap();
            let (w, h, inked, colours) = content(&shot);
            assert_eq!((w, h), (width, height), "{name}");
            assert!(inked > 0.03 && colours > 16, "{name} looks blank: {:.1}% inked, {colours} colours", 100.0 * inked);
            let golden = testdata(&format!("golden/{name}"));
            if update {
                std::fs::write(&golden, &shot).unwrap();
            } else if same_chromium {
                let want = std::fs::read(&golden).unwrap();
                // Byte-identical on the machine that made it; elsewhere text may be smoothed
                // differently, so a few per cent of pixels may move, not the layout.
                let changed = changed_pixels(&want, &shot);
                assert!(
                    changed <= 0.03,
                    "{name}: {:.1}% of pixels differ from its golden file under the same {version}; look at {} and rewrite with UPDATE_GOLDEN=1",
                    changed * 100.0,
                    out.join(&name).display()
                );
            } else {
                // Said, not silent: another chromium renders fonts differently, so only the
                // checks above apply.
                eprintln!("{name}: not compared with its golden file (made by another chromium than {version})");
            }
        };
        check(format!("run-fixed-{width}.png"), shot);
        // The write chart at the top of the screen: its step must read at either width.
        tab.eval("document.querySelectorAll('main figure.chart:not(.levels)')[1].scrollIntoView()");
        check(format!("run-fixed-{width}-write.png"), screenshot(&tab, width, height));
    }
    if update {
        std::fs::write(&stamp, format!("{version}\n")).unwrap();
    }
}
