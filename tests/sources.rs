//! Build matrix: providers, verification, status reporting.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use common::*;
use sha2::{Digest, Sha256};

pub const REGISTRY_TAGS: [&str; 11] = [
    "LMDB_0.9.17",
    "LMDB_0.9.18",
    "LMDB_0.9.21",
    "LMDB_0.9.22",
    "LMDB_0.9.23",
    "LMDB_0.9.24",
    "LMDB_0.9.26",
    "LMDB_0.9.27",
    "LMDB_0.9.29",
    "LMDB_0.9.31",
    "LMDB_0.9.33",
];

fn rows(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v.as_array().expect("an array")
}

fn row<'a>(v: &'a serde_json::Value, tag: &str) -> &'a serde_json::Value {
    rows(v).iter().find(|r| r["tag"] == tag).unwrap_or_else(|| panic!("no row for {tag}"))
}

/// Every registry tag is fetched, verified and built once, into the shared fixture (by
/// build.rs under `make test`, whose matrix is the default range, through the very providers
/// `build` uses); this test then lists them from a copy of it. Building eleven tags again in
/// a cache of its own cost a cold CI run about 90 s of CPU.
#[test]
fn registry_tags_are_fetched_verified_built_and_report_their_version() {
    run_ok(fixture_command().args(["build", "--tags", "all"]));
    let out = run_ok(lmdb_regress().args(["build", "--tags", "all", "--json"]));
    let v = json(&out);
    assert_eq!(rows(&v).len(), 22);
    for tag in REGISTRY_TAGS {
        let r = row(&v, tag);
        assert_eq!(r["status"], "built", "{tag}: {r}");
        let lib = r["library"].as_str().unwrap();
        assert!(Path::new(lib).is_absolute() && Path::new(lib).is_file(), "{lib}");
        let expected_match = if tag == "LMDB_0.9.17" || tag == "LMDB_0.9.29" { "equivalent" } else { "identical" };
        assert_eq!(r["match"], expected_match, "{tag}");
        let prov = r["provenance"].as_str().unwrap();
        assert!(prov.starts_with("crate ") || prov.starts_with("PyPI sdist "), "{tag}: {prov}");
        let version = r["builds"][0]["lmdb_version"].as_str().unwrap();
        assert!(version.contains(&format!("{}:", tag.trim_start_matches("LMDB_"))), "{tag} reports {version}");
        // The files really hash as recorded.
        let dir = Path::new(lib).parent().unwrap();
        let rec: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("build.json")).unwrap()).unwrap();
        assert_eq!(rec["files"], r["files"]);
    }
    for tag in ["LMDB_0.9.19", "LMDB_0.9.20", "LMDB_0.9.25", "LMDB_0.9.28", "LMDB_0.9.30", "LMDB_0.9.32"] {
        let r = row(&v, tag);
        assert_eq!(r["status"], "unavailable", "{tag}");
        assert!(r["library"].is_null());
        let reason = r["reason"].as_str().unwrap();
        assert!(reason.contains("--git PATH") && reason.contains("no registry package"), "{tag}: {reason}");
    }
}

#[test]
fn offline_with_an_empty_cache_every_tag_is_unavailable_and_said_once() {
    let cache = tempfile::tempdir().unwrap();
    let build = |json: bool| {
        let mut c = lmdb_regress();
        c.env("LMDB_REGRESS_CACHE", cache.path()).env("LMDB_REGRESS_OFFLINE", "1").args(["build", "--tags", "all"]);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(!out.status.success(), "nothing was built, and the exit status says so");
        out
    };
    let out = build(true);
    let v = json(&out);
    assert_eq!(rows(&v).len(), 22);
    for r in rows(&v) {
        assert_eq!(r["status"], "unavailable", "{r}");
        let reason = r["reason"].as_str().unwrap();
        assert!(reason.contains("LMDB_REGRESS_OFFLINE") && reason.contains("--git"), "{reason}");
        // Each tag's own files: 1.0 adds module.c.
        let files = if r["tag"].as_str().unwrap().starts_with("LMDB_1.") { 5 } else { 4 };
        assert_eq!(r["files"].as_object().unwrap().len(), files, "{r}");
    }
    // The table form: every tag once in the table, and why in one short block, said once.
    let out = build(false);
    let (table, err) = (stdout(&out), stderr(&out));
    assert_eq!(table.matches("unavailable").count(), 22, "{table}");
    assert_eq!(err.matches("22 of 22 tags unavailable here").count(), 1, "{err}");
    assert_eq!(err.matches("LMDB_REGRESS_OFFLINE").count(), 1, "{err}");
    assert_eq!(err.matches("--git PATH").count(), 1, "{err}");
    assert!(err.lines().count() <= 8, "a short block, not a warning per tag:\n{err}");
    assert!(err.lines().chain(table.lines()).all(|l| l.chars().count() <= 80), "{table}{err}");
}

#[test]
fn tags_lists_without_fetching_or_building() {
    let cache = tempfile::tempdir().unwrap();
    let out = run_ok(lmdb_regress().env("LMDB_REGRESS_CACHE", cache.path()).arg("tags"));
    let text = stdout(&out);
    assert!(text.contains("nothing is fetched or built here") && text.contains("lmdb-regress build"), "{text}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "tags wrote nothing into the cache");
    let v = json(&run_ok(lmdb_regress().env("LMDB_REGRESS_CACHE", cache.path()).args(["tags", "--json"])));
    assert_eq!(rows(&v).len(), 22);
    assert_eq!(row(&v, "LMDB_0.9.18")["sources"], "registry", "a registry carries 0.9.18");
    assert_eq!(row(&v, "LMDB_0.9.19")["sources"], "archive", "only the archive (or git) has 0.9.19");
    assert!(rows(&v).iter().all(|r| r["builds"].as_array().unwrap().is_empty()));
    // What is cached already is said: this test's own cache holds the fixture's builds.
    let v = json(&run_ok(lmdb_regress().args(["tags", "--json"])));
    let r = row(&v, "LMDB_0.9.33");
    assert_eq!(r["sources"], "cache", "{r}");
    let lib = r["builds"][0]["artifact"].as_str().unwrap();
    assert!(Path::new(lib).is_file(), "{r}");
}

#[test]
fn unknown_tag_is_an_error_listing_the_known_ones() {
    let out = lmdb_regress().args(["build", "--tags", "0.9.99"]).output().unwrap();
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("unknown tag LMDB_0.9.99") && e.contains("LMDB_0.9.17") && e.contains("LMDB_0.9.36"), "{e}");
}

/// A repository with 0.9.18 and 0.9.21 as fetched from the registries, built by tag and by
/// commit, from a clone and from a bare repository, with nothing else reachable.
#[test]
fn git_provider_builds_tags_and_commits_from_clones_and_bare_repositories() {
    let (s18, s21) = (source_dir("LMDB_0.9.18"), source_dir("LMDB_0.9.21"));
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    let ids = make_repo(&repo, &[("LMDB_0.9.18", &s18), ("LMDB_0.9.21", &s21)]);
    let bare = tmp.path().join("openldap.git");
    git(tmp.path(), &["clone", "-q", "--bare", repo.to_str().unwrap(), bare.to_str().unwrap()]);

    for r in [&repo, &bare] {
        let cache = tempfile::tempdir().unwrap();
        let spec = format!("0.9.18,0.9.21,{}", &ids[0][..10]);
        let out = run_ok(
            lmdb_regress()
                .env("LMDB_REGRESS_CACHE", cache.path())
                .env("LMDB_REGRESS_OFFLINE", "1")
                // Wide enough that no row wraps (the table has an mtest column too).
                .env("COLUMNS", "200")
                // Unoptimised: what is built from where, not its machine code, is the point.
                .args(["build", "--cflags", &unoptimised_cflags(), "--tags", &spec, "--git"])
                .arg(r),
        );
        let table = stdout(&out);
        assert_eq!(table.matches(" built ").count(), 3, "{table}");
        // The listing of the same cache: tags identical from git, built once each.
        let v = json(&run_ok(
            lmdb_regress()
                .env("LMDB_REGRESS_CACHE", cache.path())
                .env("LMDB_REGRESS_OFFLINE", "1")
                .args(["tags", "--json", "--git"])
                .arg(r),
        ));
        for (tag, id) in [("LMDB_0.9.18", &ids[0]), ("LMDB_0.9.21", &ids[1])] {
            let row = row(&v, tag);
            assert_eq!(row["sources"], "cache", "{row}");
            let detail = row["detail"].as_str().unwrap();
            assert!(detail.contains(&format!("git commit {id}")) && detail.ends_with("identical"), "{row}");
            assert_eq!(row["builds"].as_array().unwrap().len(), 1, "{row}");
        }
        // A tag neither the cache nor this repository holds would come from a registry.
        assert_eq!(row(&v, "LMDB_0.9.17")["sources"], "registry");
        assert!(table.contains(&ids[0][..10]) && table.contains("unpinned"), "{table}");
    }
}

#[test]
fn tampered_files_are_refused_with_both_hashes() {
    let s18 = source_dir("LMDB_0.9.18");
    let tmp = tempfile::tempdir().unwrap();
    let evil = tmp.path().join("evil");
    std::fs::create_dir_all(&evil).unwrap();
    for f in FILES {
        std::fs::copy(s18.join(f), evil.join(f)).unwrap();
    }
    let mut mdb = std::fs::read(evil.join("mdb.c")).unwrap();
    mdb.extend_from_slice(b"\n/* tampered */\n");
    std::fs::write(evil.join("mdb.c"), &mdb).unwrap();
    let actual = hex::encode(Sha256::digest(&mdb));
    let repo = tmp.path().join("repo");
    make_repo(&repo, &[("LMDB_0.9.18", &evil)]);
    let cache = tempfile::tempdir().unwrap();
    let out = lmdb_regress()
        .env("LMDB_REGRESS_CACHE", cache.path())
        .env("LMDB_REGRESS_OFFLINE", "1")
        .args(["build", "--tags", "0.9.18", "--json", "--git"])
        .arg(&repo)
        .output()
        .unwrap();
    let v = json(&out);
    let r = row(&v, "LMDB_0.9.18");
    assert_eq!(r["status"], "unavailable");
    let reason = r["reason"].as_str().unwrap();
    let pinned = "d200f5dc2de9c5afd3326312499ded38e1073598fd69dd5e9fd3a2f38cab9e6c";
    assert!(reason.contains(&format!("mdb.c: expected {pinned}, got {actual}")), "{reason}");
    assert!(reason.contains("git"), "names the provider: {reason}");
    assert!(
        !std::fs::read_dir(cache.path()).map(|d| d.flatten().any(|e| e.file_name() == "builds")).unwrap_or(false),
        "nothing built"
    );

    // A cache entry edited after the fact is refused the same way.
    let cache = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    make_repo(&good, &[("LMDB_0.9.18", &s18)]);
    run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_CACHE", cache.path())
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["build", "--tags", "0.9.18", "--git"])
            .arg(&good),
    );
    let cached = std::fs::read_dir(cache.path().join("sources"))
        .unwrap()
        .flatten()
        .find(|e| e.path().join("mdb.c").is_file())
        .unwrap()
        .path();
    std::fs::write(cached.join("mdb.c"), &mdb).unwrap();
    let v = json(
        &lmdb_regress()
            .env("LMDB_REGRESS_CACHE", cache.path())
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["build", "--tags", "0.9.18", "--json"])
            .output()
            .unwrap(),
    );
    let reason = row(&v, "LMDB_0.9.18")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("cache") && reason.contains(&format!("got {actual}")), "{reason}");
    // A verified copy from another provider replaces the edited entry; nothing is built from it.
    let v = json(&run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_CACHE", cache.path())
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["build", "--tags", "0.9.18", "--json", "--git"])
            .arg(&good),
    ));
    assert_eq!(row(&v, "LMDB_0.9.18")["status"], "built");
    let pinned_mdb = "d200f5dc2de9c5afd3326312499ded38e1073598fd69dd5e9fd3a2f38cab9e6c";
    assert_eq!(hex::encode(Sha256::digest(std::fs::read(cached.join("mdb.c")).unwrap())), pinned_mdb);
}

/// Serves one tarball on loopback, once per request, until dropped.
fn serve(body: Vec<u8>) -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        // Bounded: a handful of requests at most, then the server ends by itself.
        for stream in listener.incoming().take(4) {
            let Ok(mut s) = stream else { break };
            let mut req = [0u8; 4096];
            let n = s.read(&mut req).unwrap_or(0);
            let path = String::from_utf8_lossy(&req[..n]).split_whitespace().nth(1).unwrap_or("").to_string();
            if path.starts_with("/archive/") && path.contains("LMDB_0.9.22") {
                let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                let _ = s.write_all(&body);
            } else {
                let _ = write!(s, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
            if path.contains("stop") {
                break;
            }
        }
    });
    (format!("http://{addr}"), handle)
}

#[test]
fn archive_provider_downloads_and_unpacks_a_tarball() {
    let s22 = source_dir("LMDB_0.9.22");
    // GitHub's layout: <repo>-<tag>/libraries/liblmdb/…
    let mut tarball = Vec::new();
    {
        let gz = flate2::write::GzEncoder::new(&mut tarball, flate2::Compression::fast());
        let mut t = tar::Builder::new(gz);
        for f in FILES {
            t.append_path_with_name(s22.join(f), format!("lmdb-LMDB_0.9.22/libraries/liblmdb/{f}")).unwrap();
        }
        t.into_inner().unwrap().finish().unwrap();
    }
    let (base, server) = serve(tarball);
    let cache = tempfile::tempdir().unwrap();
    let out = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_CACHE", cache.path())
            .env("LMDB_REGRESS_ARCHIVE_URLS", format!("{base}/missing/{{ref}}.tar.gz,{base}/archive/{{ref}}.tar.gz"))
            .args(["build", "--tags", "0.9.22"]),
    );
    let table = stdout(&out);
    assert!(table.contains("built") && table.contains("LMDB_0.9.22.tar.gz"), "{table}");
    let v = json(&run_ok(lmdb_regress().env("LMDB_REGRESS_CACHE", cache.path()).args(["tags", "--json"])));
    let detail = row(&v, "LMDB_0.9.22")["detail"].as_str().unwrap().to_string();
    assert!(detail.contains(&format!("archive {base}/archive/LMDB_0.9.22.tar.gz")), "{detail}");
    let _ = std::net::TcpStream::connect(base.trim_start_matches("http://"))
        .map(|mut s| s.write_all(b"GET /stop HTTP/1.0\r\n\r\n"));
    server.join().unwrap();
}
