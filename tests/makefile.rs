//! The Makefile's targets as a user meets them: `make run > report.md` holds the report
//! alone, whatever apt-get prints (tests/make-run.sh, under a fake apt-get).

use std::path::Path;

use crate::common::*;

#[test]
fn make_run_prints_the_report_alone_and_installs_quietly() {
    let work = tempfile::tempdir().unwrap();
    // A small run of make run's kind: time with instructions, rounds within a budget.
    let args = format!(
        "--with-instructions --rounds 3 --time-budget 9m --warmup 0 --tags 0.9.18,0.9.33 --workloads readSeq \
         --entries 1000 --count-entries 1000 --out {}",
        work.path().join("run.jsonl").display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/make-run.sh");
    let out = run_ok(in_test_env("bash").arg(script).arg(BIN).arg(work.path()).env("RUN_ARGS", args));
    assert_eq!(stdout(&out), "make-run.sh: ok\n", "{}", stderr(&out));
}

/// `make test` is one cargo invocation whose build.rs builds the default range into the
/// fixture the tests read, so that no test builds it again: every registry tag's build in
/// the fixture is older than this test binary (the build script runs before the crate is
/// compiled). A second build (a second cargo invocation that reruns build.rs, build.rs
/// pointed at another cache, or skipped) leaves builds made while the tests ran.
#[test]
fn make_tests_cargo_invocation_builds_the_matrix_once_and_the_tests_reuse_it() {
    let dry = run_ok(
        std::process::Command::new("make")
            .args(["-n", "--no-print-directory", "test"])
            .current_dir(env!("CARGO_MANIFEST_DIR")),
    );
    let cargo: Vec<String> = stdout(&dry).lines().filter(|l| l.contains("cargo ")).map(String::from).collect();
    assert!(cargo.len() == 1 && cargo[0].contains("cargo test "), "one cargo invocation, the tests': {cargo:?}");
    let linked: chrono::DateTime<chrono::Utc> =
        std::fs::metadata(std::env::current_exe().unwrap()).unwrap().modified().unwrap().into();
    for tag in crate::sources::REGISTRY_TAGS {
        let builds = std::fs::read_dir(fixture().join("builds")).unwrap().flatten().map(|e| e.path());
        let record = builds
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with(&format!("{tag}-so-")) && !name.contains("-objects-")
            })
            .map(|p| {
                serde_json::from_slice::<serde_json::Value>(&std::fs::read(p.join("build.json")).unwrap()).unwrap()
            })
            .find(|r| r["toolchain"]["cflags"] == serde_json::json!(["-O2", "-g", "-fPIC", "-shared", "-pthread"]))
            .unwrap_or_else(|| {
                panic!("{tag}: build.rs built no default build into the fixture (run the tests with `make test`)")
            });
        let built: chrono::DateTime<chrono::Utc> = record["built_at"].as_str().unwrap().parse().unwrap();
        assert!(
            built <= linked,
            "{tag} was built at {built}, after this test binary ({linked}): the tests built the matrix again \
             (run them with `make test`, whose build.rs fills the fixture)"
        );
    }
}
