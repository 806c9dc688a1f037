//! Charts, drawn with plotters: per workload the median per tag in release order with its
//! 95% interval as a whisker, the minimum, and the verdict against the baseline; across
//! runs, each tag's median per run (the site's trends). The same SVG is written as a file
//! (`--format svg`) and inlined in the HTML page. Every point carries an SVG `<title>`, a
//! tooltip in browsers.

use std::fmt::Write;

use anyhow::{anyhow, Result};
use html_escape::encode_double_quoted_attribute as attr;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::cells::{self, short_tag};
use super::extras::ExtraChart;
pub use super::extras::Whisker;
use super::model::{ReportModel, Section};
use super::outline::Chart;
use crate::record::Label;
use crate::stats::{Comparison, Verdict};

pub struct Svg;

const NEWEST: RGBColor = RGBColor(200, 60, 30);
const OTHER: RGBColor = RGBColor(40, 90, 170);
const SLOWER: RGBColor = RGBColor(190, 30, 30);
const FASTER: RGBColor = RGBColor(20, 130, 50);
const SAME: RGBColor = RGBColor(110, 110, 110);
pub(super) const SIZE: (u32, u32) = (960, 480);

pub(super) fn err(e: impl std::fmt::Debug) -> anyhow::Error {
    anyhow!("drawing a chart: {e:?}")
}

/// A point's position in the picture and what its tooltip says.
pub(super) struct Tip {
    pub(super) at: (i32, i32),
    pub(super) text: String,
}

/// Adds a `<title>` to the picture and an invisible, hoverable circle with a `<title>` on
/// every point: plotters draws shapes but cannot attach titles to them.
pub(super) fn with_titles(svg: String, title: &str, tips: &[Tip]) -> String {
    use html_escape::encode_text;
    let mut out = String::with_capacity(svg.len() + tips.len() * 160);
    let open_end = svg.find("<svg").and_then(|i| svg[i..].find('>').map(|j| i + j + 1)).unwrap_or(0);
    let close = svg.rfind("</svg>").unwrap_or(svg.len());
    out.push_str(&svg[..open_end]);
    out.push_str(&format!("\n<title>{}</title>", encode_text(title)));
    out.push_str(&svg[open_end..close]);
    out.push_str("<g fill=\"#000\" fill-opacity=\"0\">\n");
    for t in tips {
        out.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"9\"><title>{}</title></circle>\n",
            t.at.0,
            t.at.1,
            encode_text(&t.text)
        ));
    }
    out.push_str("</g>\n");
    out.push_str(&svg[close..]);
    out
}

/// ▲ slower, ▼ faster, = same against the baseline; hollow when time only; none when
/// inconclusive.
fn verdict_mark(j: cells::Judged) -> Option<(&'static str, &'static RGBColor)> {
    match (j.verdict, j.time_only) {
        (Verdict::Slower, false) => Some(("▲", &SLOWER)),
        (Verdict::Slower, true) => Some(("△", &SLOWER)),
        (Verdict::Faster, false) => Some(("▼", &FASTER)),
        (Verdict::Faster, true) => Some(("▽", &FASTER)),
        (Verdict::Same, _) => Some(("=", &SAME)),
        (Verdict::Inconclusive, _) => None,
    }
}

/// The tooltip of one tag's point.
fn point_text(m: &ReportModel, s: &Section, tag: &Label) -> String {
    let Some(r) = s.ranked.iter().find(|r| r.tag == *tag) else { return cells::label(tag) };
    let mut t = format!(
        "{}: median {} {} {}, min {}, n {}",
        cells::label(tag),
        cells::num(r.summary.median),
        m.unit_of(s),
        cells::plus_minus(&r.summary),
        cells::num(r.summary.min),
        r.summary.n
    );
    if let Some(d) = s.vs_baseline.iter().find(|b| b.tag == *tag).and_then(|b| b.vs_baseline.as_ref()) {
        t.push_str(&format!("; vs {}: {}", short_tag(&cells::label(&d.against)), cells::delta_line(&d.comparison)));
        if d.time_only {
            t.push_str(", time only");
        }
        if let Some(i) = d.instructions() {
            t.push_str(&format!("; instructions per entry {}", cells::delta(i)));
        }
    }
    t
}

/// One column of a chart of ratios: something measured against its reference (a tag
/// against the baseline, a claim against its baseline, a probe against the good end, a
/// commit against the one before it).
pub struct RatioPoint {
    /// The x axis' label.
    pub label: String,
    /// The model's estimate and interval of measured / reference, as judged; None for the
    /// reference itself, drawn at 0%.
    pub comparison: Option<Comparison>,
    pub time_only: bool,
    /// Instructions per entry, measured / reference: exact, so drawn without an interval.
    pub instructions: Option<f64>,
    /// A ratio to hold the estimate against (a claim's size), drawn as a black dash.
    pub claimed: Option<f64>,
    pub newest: bool,
    /// A probe's side of a bisection, which colours it in place of the comparison's verdict.
    pub side: Option<Side>,
    pub tip: String,
}

/// Which end of a bisection a probe was judged to lie with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Good,
    Bad,
    Undecided,
}

impl Side {
    pub fn word(self) -> &'static str {
        match self {
            Side::Good => "good",
            Side::Bad => "bad",
            Side::Undecided => "undecided",
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Side::Good => FASTER,
            Side::Bad => SLOWER,
            Side::Undecided => INCONCLUSIVE,
        }
    }
}

/// A chart of ratios against a line at 0% (ratio 1.0), the `same` band shaded.
pub struct RatioChart {
    pub title: String,
    /// What the points are against, as the legend says it ("0.9.17", "the commit before").
    pub against: String,
    pub x_desc: String,
    /// The `same` band: ±this fraction (the rule's `min_effect`).
    pub min_effect: f64,
    pub points: Vec<RatioPoint>,
}

const INSTRUCTIONS: RGBColor = RGBColor(110, 40, 150);
const INCONCLUSIVE: RGBColor = RGBColor(120, 120, 140);

fn pct(ratio: f64) -> f64 {
    100.0 * (ratio - 1.0)
}

fn hex(c: &RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

fn verdict_colour(v: Verdict) -> RGBColor {
    match v {
        Verdict::Slower => SLOWER,
        Verdict::Faster => FASTER,
        Verdict::Same => SAME,
        Verdict::Inconclusive => INCONCLUSIVE,
    }
}

/// The y range in percent: every estimate, count and the band, with intervals reaching
/// at most half that span beyond (a wider interval is cut with an arrow: an inconclusive
/// tag must not flatten the step the others show).
fn ratio_axis(c: &RatioChart) -> (f64, f64) {
    let band = 100.0 * c.min_effect;
    let core = c.points.iter().flat_map(|p| {
        p.comparison.as_ref().map(|k| pct(k.ratio)).into_iter().chain(p.instructions.map(pct)).chain(p.claimed.map(pct))
    });
    let (lo, hi) = core.fold((-band, band), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let span = hi - lo;
    let ends = c.points.iter().filter_map(|p| p.comparison.as_ref()?.ci).flat_map(|ci| [pct(ci.lo), pct(ci.hi)]);
    let (lo, hi) = ends.fold((lo, hi), |(l, h), v| (l.min(v.max(lo - span / 2.0)), h.max(v.min(hi + span / 2.0))));
    let pad = 0.08 * (hi - lo);
    // More room on top, for the figures written above the points.
    (lo - pad, hi + 2.0 * pad)
}

/// "+5%", "0", "-2.5%": the axis' labels.
fn axis_percent(y: f64) -> String {
    if y.abs() < 1e-9 {
        return "0".into();
    }
    let s = format!("{y:+.1}");
    format!("{}%", s.strip_suffix(".0").unwrap_or(&s))
}

/// Draws a chart of ratios. Plotters draws the frame and axes; the marks are written as
/// SVG of their own so that each carries a class and its figures as data attributes
/// (`reference`, `same-band`, `newest`, `interval`, `estimate`, `instructions`), which
/// tests and scripts read.
pub fn ratios(c: &RatioChart) -> Result<String> {
    let (ylo, yhi) = ratio_axis(c);
    let n = c.points.len() as i32;
    let upright = Upright::of(c);
    // 720 wide, so that a phone shows the whole chart scaled by a half: more columns stand
    // their labels upright, in room below the axis, rather than widen it.
    let size = (720, 460 + upright.as_ref().map_or(0, |u| u.room));
    let mut buf = String::new();
    let (marks, tips) = {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (head, area) = root.split_vertically(92);
        let centre = TextStyle::from(("sans-serif", 22).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        head.draw(&Text::new(c.title.clone(), (size.0 as i32 / 2, 10), centre)).map_err(err)?;
        let mut ch = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(52 + upright.as_ref().map_or(0, |u| u.room as i32))
            .y_label_area_size(76)
            .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), ylo..yhi)
            .map_err(err)?;
        axes(&mut ch.configure_mesh())
            .x_labels(c.points.len())
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) if upright.is_none() => {
                    c.points.get(*i as usize).map(|p| p.label.clone()).unwrap_or_default()
                }
                _ => String::new(),
            })
            .x_desc(c.x_desc.as_str())
            .y_desc(format!("change against {}", c.against))
            .y_label_formatter(&|y| axis_percent(*y))
            .draw()
            .map_err(err)?;
        let at = |i: usize, y: f64| ch.backend_coord(&(SegmentValue::CenterOf(i as i32), y.clamp(ylo, yhi)));
        let (xs, _) = ch.plotting_area().get_pixel_range();
        // Half the width of the newest tag's shading: most of its column.
        let column = (xs.end - xs.start) * 3 / (10 * n.max(1));
        let mut o = String::from("<g class=\"ratios\">\n");
        o.push_str(&legend(c, size.0 / 2));
        for (i, p) in c.points.iter().enumerate().filter(|(_, p)| p.newest) {
            let (x, _) = at(i, 0.0);
            let (top, bottom) = (at(i, yhi).1, at(i, ylo).1);
            let _ = writeln!(
                o,
                "<rect class=\"newest\" data-label=\"{}\" x=\"{}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"#fff4c2\" fill-opacity=\"0.7\"/>",
                attr(&p.label),
                x - column,
                2 * column,
                bottom - top
            );
        }
        let band = 100.0 * c.min_effect;
        let (band_top, band_bottom) = (at(0, band).1, at(0, -band).1);
        let _ = writeln!(
            o,
            "<rect class=\"same-band\" data-min-effect=\"{}\" x=\"{}\" y=\"{band_top}\" width=\"{}\" height=\"{}\" fill=\"#808080\" fill-opacity=\"0.16\"/>",
            c.min_effect,
            xs.start,
            xs.end - xs.start,
            band_bottom - band_top
        );
        let zero = at(0, 0.0).1;
        let _ = writeln!(
            o,
            "<line class=\"reference\" data-ratio=\"1\" x1=\"{}\" y1=\"{zero}\" x2=\"{}\" y2=\"{zero}\" stroke=\"#000\" stroke-width=\"1.5\"/>",
            xs.start, xs.end
        );
        let mut tips = Vec::with_capacity(c.points.len());
        for (i, p) in c.points.iter().enumerate() {
            let y = p.comparison.as_ref().map_or(0.0, |k| pct(k.ratio));
            if let Some(u) = &upright {
                o.push_str(&u.label(p, at(i, ylo).0, at(i, ylo).1 + 8));
            }
            // Crowded, only the newest tag's figure is written, above its column: the axis
            // gives the others'.
            let figure = match (&upright, p.newest) {
                (None, _) => SvgFigure::Beside,
                (Some(_), true) => SvgFigure::Above,
                (Some(_), false) => SvgFigure::Omitted,
            };
            o.push_str(&point_marks(p, &|y| at(i, y), (ylo, yhi), figure));
            if let Some(r) = p.instructions {
                let (x, y) = at(i, pct(r));
                // Crowded, the diamond keeps to its own column.
                let x = x + if upright.is_some() { 3 } else { 10 };
                let _ = writeln!(
                    o,
                    "<path class=\"instructions\" data-label=\"{}\" data-ratio=\"{r}\" d=\"M{} {y}l7 -7l7 7l-7 7z\" fill=\"{}\"/>",
                    attr(&p.label),
                    x,
                    hex(&INSTRUCTIONS)
                );
            }
            if let Some(r) = p.claimed {
                let (x, y) = at(i, pct(r));
                let _ = writeln!(
                    o,
                    "<line class=\"claimed\" data-label=\"{}\" data-ratio=\"{r}\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#000\" stroke-width=\"3\" stroke-dasharray=\"4 3\"/>",
                    attr(&p.label),
                    x - 16,
                    x + 16
                );
            }
            tips.push(Tip { at: at(i, y), text: p.tip.clone() });
        }
        o.push_str("</g>\n");
        root.present().map_err(err)?;
        (o, tips)
    };
    let close = buf.rfind("</svg>").unwrap_or(buf.len());
    buf.insert_str(close, &marks);
    // The page lets this chart shrink to a phone's width (style.css).
    let buf = buf.replacen("<svg ", "<svg class=\"ratio-chart\" ", 1);
    Ok(with_titles(buf, &c.title, &tips))
}

/// The two lines under the title: what the points are against and what the marks mean,
/// each word in its mark's colour.
fn legend(c: &RatioChart, centre: u32) -> String {
    let span = |col: &RGBColor, t: &str| format!("<tspan fill=\"{}\">{t}</tspan>", hex(col));
    let against = html_escape::encode_text(&c.against);
    let first = if c.points.iter().any(|p| p.side.is_some()) {
        format!(
            "estimate and interval against {against}, coloured by the probe's side: {} {} {}",
            span(&SLOWER, "● bad"),
            span(&FASTER, "● good"),
            span(&INCONCLUSIVE, "○ undecided"),
        )
    } else {
        format!(
            "estimate and interval against {against}: {} {} {} {}",
            span(&SLOWER, "● slower"),
            span(&FASTER, "● faster"),
            span(&SAME, "● same"),
            span(&INCONCLUSIVE, "○ inconclusive"),
        )
    };
    let reference = c.points.iter().any(|p| p.comparison.is_none());
    let claimed = c.points.iter().any(|p| p.claimed.is_some());
    let second = format!(
        "{}ring: time only · {}{}",
        if reference { format!("□ {against} itself · ") } else { String::new() },
        span(&INSTRUCTIONS, "◆ instructions per entry (exact)"),
        if claimed { " · dashes: the size claimed" } else { "" }
    );
    let newest = if c.points.iter().any(|p| p.newest) { " · yellow: newest tag" } else { "" };
    let third = format!("grey band: same ({}){newest}", cells::within(100.0 * c.min_effect));
    let line = |y: i32, t: &str| {
        format!("<text x=\"{centre}\" y=\"{y}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"15\" fill=\"#000\">{t}</text>\n")
    };
    line(50, &first) + &line(68, &second) + &line(86, &third)
}

/// More columns than this, and their labels stand upright, so that no two overlap.
const SIDE_BY_SIDE: usize = 10;

/// The labels of a crowded axis, rotated to read upwards, each ending under its column;
/// a label longer than `CHARS` is cut with an ellipsis.
struct Upright {
    font: u32,
    /// The height the longest label takes below the axis.
    room: u32,
}

impl Upright {
    const CHARS: usize = 12;

    fn of(c: &RatioChart) -> Option<Upright> {
        if c.points.len() <= SIDE_BY_SIDE {
            return None;
        }
        // The plot is about 600 px wide; a label's line height stays within its column.
        let column = 600 / c.points.len() as u32;
        let font = (column * 7 / 10).clamp(10, 18);
        let longest = c.points.iter().map(|p| Self::cut(&p.label).chars().count()).max().unwrap_or(0);
        Some(Upright { font, room: (longest as u32 * font * 6 / 10).saturating_sub(16) })
    }

    fn cut(label: &str) -> String {
        match label.chars().count() > Self::CHARS {
            true => label.chars().take(Self::CHARS - 1).chain(['…']).collect(),
            false => label.to_string(),
        }
    }

    /// One column's label, its top at `(x, y)`; the newest tag's in bold.
    fn label(&self, p: &RatioPoint, x: i32, y: i32) -> String {
        let weight = if p.newest { " font-weight=\"bold\"" } else { "" };
        format!(
            "<text class=\"axis-label\" x=\"{x}\" y=\"{y}\" transform=\"rotate(-90 {x} {y})\" text-anchor=\"end\" \
             dominant-baseline=\"central\" font-family=\"sans-serif\" font-size=\"{}\"{weight} fill=\"#000\">{}</text>\n",
            self.font,
            html_escape::encode_text(&Self::cut(&p.label))
        )
    }
}

/// Where a column's percentage is written.
#[derive(Clone, Copy, PartialEq)]
enum SvgFigure {
    /// Left of its estimate, above it.
    Beside,
    /// Centred above its interval.
    Above,
    Omitted,
}

/// One column's interval, estimate and percentage, or the reference's own mark at 0%.
fn point_marks(p: &RatioPoint, at: &dyn Fn(f64) -> (i32, i32), (ylo, yhi): (f64, f64), figure: SvgFigure) -> String {
    let label = attr(&p.label);
    let Some(k) = &p.comparison else {
        let (x, y) = at(0.0);
        return format!(
            "<rect class=\"reference-point\" data-label=\"{label}\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"#fff\" stroke=\"#000\" stroke-width=\"2\"/>\n",
            x - 6,
            y - 6
        );
    };
    let (colour, verdict) = match p.side {
        Some(side) => (side.colour(), side.word()),
        None => (verdict_colour(k.verdict), k.verdict.word()),
    };
    let hollow = p.side.map_or(k.verdict == Verdict::Inconclusive, |s| s == Side::Undecided);
    let colour = hex(&colour);
    let mut o = String::new();
    let (x, y) = at(pct(k.ratio));
    // The top of what the column draws, above which `SvgFigure::Above` writes.
    let mut top_end = y - 6;
    if let Some(ci) = k.ci {
        let (lo, hi) = (pct(ci.lo), pct(ci.hi));
        let ((x, top), (_, bottom)) = (at(hi), at(lo));
        let _ = write!(
            o,
            "<g class=\"interval {verdict}\" data-label=\"{label}\" data-lo=\"{}\" data-hi=\"{}\" stroke=\"{colour}\" stroke-width=\"2.5\" fill=\"none\">\
             <line x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{bottom}\"/>",
            ci.lo, ci.hi
        );
        top_end = top_end.min(top);
        // A cap at each end; an arrowhead where the interval runs past the axis.
        for (end, y, dir) in [(hi, top, 1), (lo, bottom, -1)] {
            if (end > yhi && dir == 1) || (end < ylo && dir == -1) {
                let _ = write!(o, "<path d=\"M{} {}l7 {}l7 {}\"/>", x - 7, y + 9 * dir, -9 * dir, 9 * dir);
            } else {
                let _ = write!(o, "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>", x - 8, x + 8);
            }
        }
        o.push_str("</g>\n");
    }
    let fill = if hollow { "#fff".to_string() } else { colour.clone() };
    let _ = writeln!(
        o,
        "<circle class=\"estimate {verdict}\" data-label=\"{label}\" data-ratio=\"{}\" cx=\"{x}\" cy=\"{y}\" r=\"6\" fill=\"{fill}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
        k.ratio
    );
    if p.time_only {
        let _ = writeln!(o, "<circle class=\"time-only\" cx=\"{x}\" cy=\"{y}\" r=\"10\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"/>");
    }
    let (fx, fy, anchor) = match figure {
        SvgFigure::Omitted => return o,
        SvgFigure::Beside => (x - 12, y - 8, "end"),
        SvgFigure::Above => (x, top_end - 8, "middle"),
    };
    let _ = writeln!(
        o,
        "<text x=\"{fx}\" y=\"{fy}\" text-anchor=\"{anchor}\" font-family=\"sans-serif\" font-size=\"16\" fill=\"{colour}\">{}</text>",
        cells::ratio_percent(k.ratio)
    );
    o
}

/// One workload's chart: each tag's ratio to the baseline in release order, the report's
/// own estimate and interval (the baseline table's), and instructions per entry beside
/// it where counted. Without a baseline table, each tag's own level.
pub fn chart(m: &ReportModel, s: &Section) -> Result<String> {
    if s.vs_baseline.is_empty() {
        return levels(m, s);
    }
    let points = s
        .vs_baseline
        .iter()
        .map(|b| {
            let d = b.vs_baseline.as_ref();
            RatioPoint {
                label: short_tag(&cells::label(&b.tag)).to_string(),
                comparison: d.map(|d| d.comparison.clone()),
                time_only: d.is_some_and(|d| d.time_only),
                instructions: d.and_then(|d| d.instructions()).map(|c| c.ratio),
                claimed: None,
                newest: m.newest.as_ref() == Some(&b.tag),
                side: None,
                tip: point_text(m, s, &b.tag),
            }
        })
        .collect();
    let against = short_tag(&cells::baseline_label(m)).to_string();
    ratios(&RatioChart {
        title: format!("{} — {}, each tag against {against}", m.section_title(s), m.unit_of(s)),
        against,
        x_desc: "LMDB tag".into(),
        min_effect: m.rule.min_effect,
        points,
    })
}

/// Each tag's own level: medians in release order with interval whiskers, minima, and
/// the verdict against the baseline above each tag. The page shows it behind a toggle,
/// below the chart of ratios.
pub fn levels(m: &ReportModel, s: &Section) -> Result<String> {
    let mut rows: Vec<_> = s.ranked.iter().collect();
    rows.sort_by_key(|r| r.tag.release_key());
    let n = rows.len() as i32;
    let bounds: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| r.summary.median_ci.map(|c| (c.lo, c.hi)).unwrap_or((r.summary.min, r.summary.max)))
        .collect();
    let lo = bounds.iter().map(|b| b.0).chain(rows.iter().map(|r| r.summary.min)).fold(f64::INFINITY, f64::min);
    let hi = bounds.iter().map(|b| b.1).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.01).max(1e-9);
    // Twice the room on top, for the verdict marks.
    let (ylo, yhi) = ((lo - pad).max(0.0), hi + 2.0 * pad);
    let spread = s.layout_spread.map(|x| format!("; layout spread ±{:.1}%", 100.0 * x)).unwrap_or_default();
    let title = format!("{} — median {} with 95% interval, × minimum{spread}", m.section_title(s), m.unit_of(s));
    let legend = format!(
        "against {}: ▲ slower  ▼ faster  = same  (hollow: time only)   red: newest tag",
        short_tag(&cells::baseline_label(m))
    );
    let judged = |tag: &Label| {
        s.vs_baseline.iter().find(|b| b.tag == *tag).and_then(|b| b.vs_baseline.as_ref()).map(cells::Judged::of)
    };
    let mut buf = String::new();
    let tips = {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        let area = headed(&root, &title, Some(&legend))?;
        let mut c = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(76)
            .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), ylo..yhi)
            .map_err(err)?;
        let labels: Vec<String> = rows.iter().map(|r| short_tag(&cells::label(&r.tag)).to_string()).collect();
        axes(&mut c.configure_mesh())
            .x_labels(rows.len())
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .x_desc("LMDB tag")
            .y_desc(m.unit_of(s))
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(err)?;
        let color = |tag: &Label| if m.newest.as_ref() == Some(tag) { NEWEST } else { OTHER };
        let x = |i: usize| SegmentValue::CenterOf(i as i32);
        c.draw_series(rows.iter().zip(&bounds).enumerate().map(|(i, (r, b))| {
            ErrorBar::new_vertical(x(i), b.0, r.summary.median, b.1, color(&r.tag).stroke_width(2), 12)
        }))
        .map_err(err)?;
        c.draw_series(
            rows.iter().enumerate().map(|(i, r)| Circle::new((x(i), r.summary.median), 4, color(&r.tag).filled())),
        )
        .map_err(err)?;
        // The fastest sample: on a shared machine the floor separates tags the medians blur.
        c.draw_series(
            rows.iter().enumerate().map(|(i, r)| Cross::new((x(i), r.summary.min), 4, color(&r.tag).stroke_width(1))),
        )
        .map_err(err)?;
        let mark_y = yhi - pad;
        c.draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
            let (glyph, col) = verdict_mark(judged(&r.tag)?)?;
            let style =
                TextStyle::from(("sans-serif", 18).into_font()).color(col).pos(Pos::new(HPos::Center, VPos::Center));
            Some(Text::new(glyph.to_string(), (x(i), mark_y), style))
        }))
        .map_err(err)?;
        let tips: Vec<Tip> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| Tip { at: c.backend_coord(&(x(i), r.summary.median)), text: point_text(m, s, &r.tag) })
            .collect();
        root.present().map_err(err)?;
        tips
    };
    Ok(with_titles(buf, &title, &tips))
}

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
pub(super) type Mesh<'a, 'b> = plotters::chart::MeshStyle<
    'a,
    'b,
    plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordi32>,
    plotters::coord::types::RangedCoordf64,
    SVGBackend<'a>,
>;

/// A white picture with the title on top and, below it, a line of legend; returns the
/// area left for the chart.
pub(super) fn headed<'a>(root: &Area<'a>, title: &str, legend: Option<&str>) -> Result<Area<'a>> {
    root.fill(&WHITE).map_err(err)?;
    let (head, rest) = root.split_vertically(if legend.is_some() { 64 } else { 40 });
    let centre = |size: u32| TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    head.draw(&Text::new(title.to_string(), (SIZE.0 as i32 / 2, 12), centre(22))).map_err(err)?;
    if let Some(l) = legend {
        head.draw(&Text::new(l.to_string(), (SIZE.0 as i32 / 2, 40), centre(16))).map_err(err)?;
    }
    Ok(rest)
}

/// Axis labels large enough to read when the chart is scaled down to a phone's width; a
/// light line at each labelled value only.
pub(super) fn axes<'a, 'b, 'c>(mesh: &'c mut Mesh<'a, 'b>) -> &'c mut Mesh<'a, 'b> {
    mesh.disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 17))
        .y_labels(8)
}

/// One of the model's charts; None for a section the model does not have.
pub fn draw(m: &ReportModel, chart: Chart) -> Result<Option<String>> {
    match chart {
        Chart::Section(engine, workload) => m.section(engine, workload).map(|s| self::chart(m, s)).transpose(),
        Chart::Extra(i) => m.extras.charts.get(i).map(extra_chart).transpose(),
    }
}

pub(super) fn extra_chart(c: &ExtraChart) -> Result<String> {
    whiskers(&c.title, &c.unit, &c.columns)
}

/// Tags in the given order along x, each a whisker with its dot and cross.
pub fn whiskers(title: &str, y_desc: &str, columns: &[Whisker]) -> Result<String> {
    let n = columns.len() as i32;
    let lo = columns.iter().flat_map(|c| [c.lo, c.mark]).fold(f64::INFINITY, f64::min);
    let hi = columns.iter().flat_map(|c| [c.hi, c.mark]).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.01).max(1e-9);
    let (ylo, yhi) = ((lo - pad).max(0.0), hi + pad);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (960, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), ylo..yhi)
            .map_err(|e| anyhow!("{e:?}"))?;
        let labels: Vec<String> = columns.iter().map(|c| short_tag(&c.tag).to_string()).collect();
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(columns.len())
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .x_desc("LMDB tag")
            .y_desc(y_desc)
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(|e| anyhow!("{e:?}"))?;
        let color = |c: &Whisker| if c.newest { NEWEST } else { OTHER };
        c.draw_series(columns.iter().enumerate().map(|(i, w)| {
            ErrorBar::new_vertical(SegmentValue::CenterOf(i as i32), w.lo, w.mid, w.hi, color(w).stroke_width(2), 12)
        }))
        .map_err(|e| anyhow!("{e:?}"))?;
        c.draw_series(
            columns
                .iter()
                .enumerate()
                .map(|(i, w)| Circle::new((SegmentValue::CenterOf(i as i32), w.mid), 4, color(w).filled())),
        )
        .map_err(|e| anyhow!("{e:?}"))?;
        c.draw_series(
            columns
                .iter()
                .enumerate()
                .map(|(i, w)| Cross::new((SegmentValue::CenterOf(i as i32), w.mark), 4, color(w).stroke_width(1))),
        )
        .map_err(|e| anyhow!("{e:?}"))?;
        root.present().map_err(|e| anyhow!("{e:?}"))?;
    }
    Ok(buf)
}
