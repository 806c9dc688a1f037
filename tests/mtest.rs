//! Every build is checked by LMDB's own test programs of the same commit, read from the git
//! repository: the 1.0 line passes its own mtest … mtest5 (from the crate lmdb-master3-sys,
//! committed to a repository made at test time); a program that fails fails the build,
//! naming the tag, the program and its last lines; sources without programs say so.

use crate::common;

use std::path::Path;

use common::*;

/// Our own stand-in for an mtest (no registry copy of 0.9.33 carries LMDB's): it opens an
/// environment in ./testdb, which must exist, writes 100 keys and reads them back.
pub const WRITES_AND_READS: &str = r#"#include <stdio.h>
#include <string.h>
#include "lmdb.h"
#define CHECK(x) do { int rc = (x); if (rc) { printf("%s: %s\n", #x, mdb_strerror(rc)); return 1; } } while (0)
int main(void) {
    MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_val key, data; char k[16]; int i;
    CHECK(mdb_env_create(&env));
    CHECK(mdb_env_open(env, "./testdb", 0, 0664));
    CHECK(mdb_txn_begin(env, NULL, 0, &txn));
    CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
    for (i = 0; i < 100; i++) {
        snprintf(k, sizeof k, "key%03d", i);
        key.mv_size = strlen(k); key.mv_data = k; data = key;
        CHECK(mdb_put(txn, dbi, &key, &data, 0));
    }
    CHECK(mdb_txn_commit(txn));
    CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    for (i = 0; i < 100; i++) {
        snprintf(k, sizeof k, "key%03d", i);
        key.mv_size = strlen(k); key.mv_data = k;
        CHECK(mdb_get(txn, dbi, &key, &data));
        if (data.mv_size != key.mv_size || memcmp(data.mv_data, k, key.mv_size)) { printf("%s differs\n", k); return 1; }
    }
    mdb_txn_abort(txn);
    mdb_env_close(env);
    printf("100 keys written and read back\n");
    return 0;
}
"#;

/// The same start, then a planted failure: exit status 1 after some output.
const FAILS: &str = r#"#include <stdio.h>
#include "lmdb.h"
int main(void) {
    MDB_env *env;
    if (mdb_env_create(&env) || mdb_env_open(env, "./testdb", 0, 0664)) return 2;
    mdb_env_close(env);
    printf("opened ./testdb\nplanted failure: this program exits 1\n");
    return 1;
}
"#;

/// A repository with LMDB_0.9.33's sources and `programs` beside them, tagged LMDB_0.9.33.
pub fn repo_0_9_33_with(repo: &Path, programs: &[(&str, &str)]) {
    make_repo(repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    for (name, text) in programs {
        std::fs::write(repo.join("libraries/liblmdb").join(name), text).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "test programs"]);
    git(repo, &["tag", "-f", "LMDB_0.9.33"]);
}

fn library_record(rows: &serde_json::Value) -> &serde_json::Value {
    let builds = rows[0]["builds"].as_array().unwrap_or_else(|| panic!("no builds: {rows}"));
    builds.iter().find(|b| b["kind"] == "shared-library").unwrap_or_else(|| panic!("no library: {rows}"))
}

#[test]
fn the_1_0_line_builds_loads_and_passes_its_own_mtest() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("openldap");
    make_repo(&repo, &[("LMDB_0.9.33", &source_dir("LMDB_0.9.33"))]);
    git(&repo, &["checkout", "-q", "-b", "mdb.master3"]);
    let (src, dest) = (master3_source_dir(), repo.join("libraries/liblmdb"));
    for f in ["lmdb.h", "mdb.c", "midl.c", "midl.h", "module.c"] {
        std::fs::copy(src.join(f), dest.join(f)).unwrap();
    }
    for (name, bytes) in master3_test_programs() {
        std::fs::write(dest.join(name), bytes).unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "the 1.0 line (mdb.master3 at 10161b20fe) with its mtest programs"]);
    let master3 = git(&repo, &["rev-parse", "HEAD"]);
    let out = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            // Unoptimised: whether LMDB's programs pass is the point, not the library's code.
            .args(["build", "--json", "--cflags", &unoptimised_cflags(), "--tags", "mdb.master3", "--git"])
            .arg(&repo),
    );
    let rows = json(&out);
    assert_eq!(rows[0]["status"], "built", "{rows}");
    let mtest = &library_record(&rows)["mtest"];
    assert_eq!(mtest["status"], "passed", "{rows}");
    assert_eq!(mtest["commit"], master3.as_str(), "{rows}");
    let programs: Vec<&String> = mtest["programs"].as_object().unwrap().keys().collect();
    assert_eq!(programs, ["mtest.c", "mtest2.c", "mtest3.c", "mtest4.c", "mtest5.c"], "{rows}");
    // The table says it too (wide enough to keep the cell on one line).
    let table = run_ok(
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .env("COLUMNS", "200")
            .args(["build", "--cflags", &unoptimised_cflags(), "--tags", "mdb.master3", "--git"])
            .arg(&repo),
    );
    assert!(stdout(&table).contains("passed (5)"), "{}", stdout(&table));
}

#[test]
fn sources_without_programs_say_not_available_and_a_failing_program_fails_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    // Registry sources, no repository: recorded as not available, never as passed. Built
    // afresh: the fixture's own build of 0.9.33 passed mtest when build.rs had LMDB_GIT.
    // Unoptimised throughout: whether programs pass is the point, not the library's code.
    std::fs::remove_dir_all(test_cache().join("builds")).unwrap();
    let out = run_ok(lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").args([
        "build",
        "--json",
        "--cflags",
        &unoptimised_cflags(),
        "--tags",
        "0.9.33",
    ]));
    let rows = json(&out);
    let mtest = &library_record(&rows)["mtest"];
    assert_eq!(mtest["status"], "not_available", "{rows}");
    assert!(mtest["reason"].as_str().unwrap().starts_with("source has no mtest.c ("), "{rows}");
    let table = run_ok(lmdb_regress().env("LMDB_REGRESS_OFFLINE", "1").env("COLUMNS", "200").args([
        "build",
        "--cflags",
        &unoptimised_cflags(),
        "--tags",
        "0.9.33",
    ]));
    assert!(stdout(&table).contains("not available"), "{}", stdout(&table));

    // A program of our own that passes: the cached build is checked and its record says so.
    let passing = tmp.path().join("passing");
    repo_0_9_33_with(&passing, &[("mtest.c", WRITES_AND_READS)]);
    let build = |repo: &Path| {
        lmdb_regress()
            .env("LMDB_REGRESS_OFFLINE", "1")
            .args(["build", "--json", "--cflags", &unoptimised_cflags(), "--tags", "0.9.33", "--git"])
            .arg(repo)
            .output()
            .unwrap()
    };
    let out = build(&passing);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = json(&out);
    let mtest = &library_record(&rows)["mtest"];
    assert_eq!(mtest["status"], "passed", "{rows}");
    assert_eq!(mtest["programs"].as_object().unwrap().len(), 1, "{rows}");

    // One that exits 1 fails the build: the tag, the program, how it ended, its last lines.
    let failing = tmp.path().join("failing");
    repo_0_9_33_with(&failing, &[("mtest.c", WRITES_AND_READS), ("mtest2.c", FAILS)]);
    let out = build(&failing);
    assert!(!out.status.success(), "{}", stdout(&out));
    let rows = json(&out);
    assert_eq!(rows[0]["status"], "failed", "{rows}");
    let reason = rows[0]["reason"].as_str().unwrap();
    for part in
        ["LMDB_0.9.33: LMDB's mtest2.c (commit ", "exited with status 1", "planted failure: this program exits 1"]
    {
        assert!(reason.contains(part), "{part:?} not in {reason}");
    }
}
