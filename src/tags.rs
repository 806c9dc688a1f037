//! Tag specifications: `0.9.17..0.9.33`, `LMDB_0.9.19`, `0.9.18,0.9.21`, `all`,
//! `default`, and (with a git repository) commit ids. Shared with build.rs.

use anyhow::{bail, Result};

use crate::manifest::{normalize_tag, Manifest};
use crate::source::Want;

pub fn parse_spec<'a>(m: &'a Manifest, spec: &str, git_available: bool) -> Result<Vec<Want<'a>>> {
    let mut out: Vec<Want<'a>> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "all" => out.extend(m.tags.iter().map(Want::Tag)),
            "default" => out.extend(parse_spec(m, &m.default.clone(), git_available)?),
            _ => {
                if let Some((a, b)) = item.split_once("..") {
                    // An open end runs to the oldest or the newest pinned tag.
                    let ia = if a.trim().is_empty() { 0 } else { index(m, a)? };
                    let ib = if b.trim().is_empty() { m.tags.len().saturating_sub(1) } else { index(m, b)? };
                    if ia > ib {
                        bail!("tag range {item} runs backwards: {} comes before {}", m.tags[ib].name, m.tags[ia].name);
                    }
                    out.extend(m.tags[ia..=ib].iter().map(Want::Tag));
                } else if let Some(t) = m.find(item) {
                    out.push(Want::Tag(t));
                } else if looks_like_commit(item) {
                    if !git_available {
                        bail!("{item} looks like a commit id: commits need --git PATH (or LMDB_GIT)");
                    }
                    out.push(Want::Commit(item.to_string()));
                } else {
                    bail!("unknown tag {}; known tags: {}", normalize_tag(item), m.known_names());
                }
            }
        }
    }
    if out.is_empty() {
        bail!("the tag specification {spec:?} names no tag");
    }
    // A tag named twice is measured once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.label()));
    Ok(out)
}

fn index(m: &Manifest, name: &str) -> Result<usize> {
    m.index_of(name.trim()).ok_or_else(|| {
        anyhow::anyhow!(
            "unknown tag {}; known tags: {} (ranges: 0.9.17..0.9.33, 0.9.35.. to the newest, ..0.9.20 from the oldest)",
            normalize_tag(name.trim()),
            m.known_names()
        )
    })
}

pub fn looks_like_commit(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(spec: &str, git: bool) -> anyhow::Result<Vec<String>> {
        let m = Manifest::builtin();
        Ok(parse_spec(&m, spec, git)?.iter().map(|w| w.label()).collect())
    }

    #[test]
    fn specs() {
        let d = labels("default", false).unwrap();
        assert_eq!(d.len(), 17);
        assert_eq!(d.first().unwrap(), "LMDB_0.9.17");
        assert_eq!(d.last().unwrap(), "LMDB_0.9.33");
        assert_eq!(labels("0.9.17..0.9.33", false).unwrap(), d);
        assert_eq!(labels("LMDB_0.9.19", false).unwrap(), ["LMDB_0.9.19"]);
        assert_eq!(labels("0.9.18,0.9.21", false).unwrap(), ["LMDB_0.9.18", "LMDB_0.9.21"]);
        assert_eq!(labels("all", false).unwrap().len(), 20);
        assert_eq!(labels("0.9.18,deadbeef", true).unwrap(), ["LMDB_0.9.18", "deadbeef"]);
        // Open ends: to the newest pinned tag, from the oldest.
        let all = labels("all", false).unwrap();
        assert_eq!(labels("0.9.35..", false).unwrap(), all[all.iter().position(|t| t == "LMDB_0.9.35").unwrap()..]);
        assert_eq!(labels("..0.9.18", false).unwrap(), ["LMDB_0.9.17", "LMDB_0.9.18"]);
    }

    #[test]
    fn bad_specs_say_why() {
        let e = labels("0.9.99", false).unwrap_err().to_string();
        assert!(e.contains("unknown tag LMDB_0.9.99") && e.contains("LMDB_0.9.17, LMDB_0.9.18"), "{e}");
        let e = labels("deadbeef", false).unwrap_err().to_string();
        assert!(e.contains("--git"), "{e}");
        let e = labels("0.9.33..0.9.17", false).unwrap_err().to_string();
        assert!(e.contains("backwards"), "{e}");
    }
}
