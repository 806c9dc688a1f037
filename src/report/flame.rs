//! A red/blue differential flame graph of two callgrind profiles, as an SVG of its own.
//!
//! Callgrind records calls as caller → callee edges with their inclusive cost, not whole
//! call paths, so the stacks are an approximation from the edges: a function reached from
//! several callers splits its cost between them in proportion to what each call cost (as
//! gprof does); a call around a cycle is left out, its cost counted where the cycle
//! starts. The shape is B's profile (a frame's width: its cost in B); a frame's
//! colour is the difference of its own (self) cost, B − A: red where B spends more, blue
//! where it spends less, white where they agree.

use std::collections::BTreeMap;

use crate::runner::profile::Profile;

/// Call paths (root first) and the self cost of the path's last frame.
pub type Folded = BTreeMap<Vec<String>, f64>;

/// Paths deeper than this are cut (their cost stays in the frame they are cut at).
const MAX_DEPTH: usize = 48;

/// `p`'s folded stacks for event `i`, approximated from its call edges.
pub fn folded(p: &Profile, i: usize) -> Folded {
    let mut callees: BTreeMap<&str, Vec<(&str, f64)>> = BTreeMap::new();
    let mut called: std::collections::BTreeSet<&str> = Default::default();
    for ((caller, callee), cost) in &p.calls {
        callees.entry(caller.as_str()).or_default().push((callee.as_str(), cost[i] as f64));
        called.insert(callee.as_str());
    }
    let total = p.totals.get(i).copied().unwrap_or(0) as f64;
    let mut out = Folded::new();
    for (name, f) in &p.functions {
        if !called.contains(name.as_str()) && f.inclusive[i] > 0 {
            expand(p, i, &callees, name, 1.0, &mut Vec::new(), total, &mut out);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn expand<'a>(
    p: &'a Profile,
    i: usize,
    callees: &BTreeMap<&'a str, Vec<(&'a str, f64)>>,
    name: &'a str,
    share: f64,
    stack: &mut Vec<String>,
    total: f64,
    out: &mut Folded,
) {
    let Some(f) = p.functions.get(name) else { return };
    stack.push(name.to_string());
    let mut own = f.self_cost[i] as f64 * share;
    for &(callee, cost) in callees.get(name).map(Vec::as_slice).unwrap_or_default() {
        let part = cost * share;
        let incl = p.functions.get(callee).map_or(0.0, |g| g.inclusive[i] as f64);
        // Around a cycle (f → g → f, or two functions of one name, such as callgrind's two
        // "(below main)") the callee's cost is already counted where it first appears, and a
        // callee the profile holds nothing of has no cost to show: both are left out.
        if incl == 0.0 || stack.iter().any(|s| s == callee) {
            continue;
        }
        // Depth and crumbs (a ten-thousandth of the whole) stay in this frame.
        if stack.len() >= MAX_DEPTH || part < total * 1e-4 {
            own += part;
        } else {
            expand(p, i, callees, callee, (part / incl).min(1.0), stack, total, out);
        }
    }
    if own > 0.0 {
        *out.entry(stack.clone()).or_default() += own;
    }
    stack.pop();
}

/// One frame of the merged graph: its cost in A and B (its own and with its callees').
#[derive(Default)]
struct Node {
    a: f64,
    b: f64,
    self_a: f64,
    self_b: f64,
    children: BTreeMap<String, Node>,
}

fn merge(a: &Folded, b: &Folded) -> Node {
    let mut root = Node::default();
    for (side, folded) in [(0, a), (1, b)] {
        for (path, v) in folded {
            let mut node = &mut root;
            for (k, name) in path.iter().enumerate() {
                node = node.children.entry(name.clone()).or_default();
                match side {
                    0 => node.a += v,
                    _ => node.b += v,
                }
                if k + 1 == path.len() {
                    match side {
                        0 => node.self_a += v,
                        _ => node.self_b += v,
                    }
                }
            }
        }
    }
    root.a = root.children.values().map(|n| n.a).sum();
    root.b = root.children.values().map(|n| n.b).sum();
    root
}

const WIDTH: f64 = 1200.0;
const ROW: f64 = 16.0;

/// The differential flame graph of `a` against `b` (costs per entry: `per` divides), as SVG.
pub fn svg(title: &str, a: &Folded, b: &Folded, per: f64) -> String {
    let root = merge(a, b);
    let depth = depth_of(&root);
    let height = (depth as f64 + 2.0) * ROW + 24.0;
    let max_delta = max_delta(&root).max(f64::MIN_POSITIVE);
    let mut body = String::new();
    let scale = if root.b > 0.0 { WIDTH / root.b } else { 0.0 };
    draw(&root, 0.0, 0, scale, height, max_delta, per, &mut body);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" width=\"100%\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"monospace\" font-size=\"11\">\n\
         <text x=\"0\" y=\"14\">{}</text>\n{body}</svg>\n",
        esc(title)
    )
}

fn depth_of(n: &Node) -> usize {
    n.children.values().map(|c| 1 + depth_of(c)).max().unwrap_or(0)
}

fn max_delta(n: &Node) -> f64 {
    n.children.values().map(|c| (c.self_b - c.self_a).abs().max(max_delta(c))).fold(0.0, f64::max)
}

#[allow(clippy::too_many_arguments)]
fn draw(n: &Node, x: f64, level: usize, scale: f64, height: f64, max: f64, per: f64, out: &mut String) {
    let mut x = x;
    for (name, c) in &n.children {
        let w = c.b * scale;
        if w >= 0.1 {
            let y = height - (level as f64 + 1.0) * ROW - 4.0;
            let delta = c.self_b - c.self_a;
            let tip = format!(
                "{name}: A {:.1}, B {:.1} per entry (self A {:.1}, B {:.1}, B − A {:+.1})",
                c.a / per,
                c.b / per,
                c.self_a / per,
                c.self_b / per,
                delta / per
            );
            out.push_str(&format!(
                "<g><title>{}</title><rect x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\" \
                 stroke=\"#888\" stroke-width=\"0.5\"/>",
                esc(&tip),
                ROW - 1.0,
                colour(delta / max)
            ));
            let chars = ((w - 4.0) / 7.0).floor() as usize;
            if chars >= 3 {
                let label: String = match name.chars().count() <= chars {
                    true => name.clone(),
                    false => name.chars().take(chars - 2).collect::<String>() + "..",
                };
                let ink = if (delta / max).abs() > 0.6 { "#fff" } else { "#000" };
                out.push_str(&format!(
                    "<text x=\"{:.2}\" y=\"{:.2}\" fill=\"{ink}\">{}</text>",
                    x + 2.0,
                    y + 11.0,
                    esc(&label)
                ));
            }
            out.push_str("</g>\n");
            draw(c, x, level + 1, scale, height, max, per, out);
        }
        x += w;
    }
}

/// Red for more in B, blue for less, white for none: `r` in [-1, 1].
pub fn colour(r: f64) -> String {
    let r = r.clamp(-1.0, 1.0);
    let fade = (255.0 * (1.0 - r.abs())).round() as u8;
    match r >= 0.0 {
        true => format!("rgb(255,{fade},{fade})"),
        false => format!("rgb({fade},{fade},255)"),
    }
}

fn esc(s: &str) -> String {
    html_escape::encode_text(s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::profile::parse;

    fn profile(extra: u64) -> Profile {
        // root → f (twice as costly as g) and root → g; f → g.
        let text = format!(
            "events: Ir\nfn=(1) root\n1 10\ncfn=(2) f\ncalls=1 1\n2 {}\ncfn=(3) g\ncalls=1 1\n3 30\n\
             fn=(2)\n1 {}\ncfn=(3)\ncalls=1 1\n2 30\nfn=(3)\n1 60\n",
            70 + extra,
            40 + extra
        );
        parse(&text).unwrap()
    }

    #[test]
    fn stacks_from_edges_keep_every_cost_once() {
        let p = profile(0);
        let f = folded(&p, 0);
        let sum: f64 = f.values().sum();
        assert!((sum - p.totals[0] as f64).abs() < 1e-9, "{f:?}");
        let path = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // g's 60 split between its callers as their calls cost: 30 and 30.
        assert_eq!(f[&path(&["root", "g"])], 30.0);
        assert_eq!(f[&path(&["root", "f", "g"])], 30.0);
        assert_eq!(f[&path(&["root", "f"])], 40.0);
    }

    #[test]
    fn frames_that_grew_are_red_and_unchanged_ones_white() {
        let (a, b) = (profile(0), profile(500));
        let page = svg("readKey", &folded(&a, 0), &folded(&b, 0), 1.0);
        assert!(page.starts_with("<svg") && page.contains("<title>f: A 70.0, B 570.0"), "{page}");
        assert!(page.contains("fill=\"rgb(255,0,0)\""), "f grew most: full red\n{page}");
        assert!(page.contains("fill=\"rgb(255,255,255)\""), "g did not change\n{page}");
        assert_eq!(colour(-1.0), "rgb(0,0,255)");
    }
}
