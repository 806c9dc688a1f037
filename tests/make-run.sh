#!/usr/bin/env bash
# `make run`'s stdout is the report and nothing else, on a machine that lacks every
# package: the Makefile's target run under a fake apt-get that only prints (as much as a
# real install does), a dpkg-query that finds nothing installed and a cargo that builds
# nothing. Then the same with an apt-get that fails: its whole output on stderr, and no
# report. tests/makefile.rs runs this under `make test`.
#
# Usage: make-run.sh BIN WORKDIR, with RUN_ARGS the run's own arguments (a small run that
# writes WORKDIR/run.jsonl) and LMDB_REGRESS_CACHE a cache with its tags built.
set -euo pipefail
bin=$1
work=$2
fake=$work/bin
mkdir -p "$fake"
cat >"$fake/apt-get" <<'EOF'
#!/bin/sh
# What apt-get prints, on stdout as apt-get does; nothing is installed.
for i in $(seq 1 80); do echo "Get:$i http://deb.debian.org/debian bookworm/main amd64 package-$i 1.0 [1024 B]"; done
echo "Setting up: $*"
if [ -n "${FAKE_APT_FAIL:-}" ] && [ "$1" = install ]; then
  echo "E: Unable to locate package $FAKE_APT_FAIL" >&2
  exit 100
fi
EOF
printf '#!/bin/sh\n# Nothing is installed.\nexit 1\n' >"$fake/dpkg-query"
printf '#!/bin/sh\nexec "$@"\n' >"$fake/sudo"
# cargo writes its progress to stderr; the binary under test is built already.
printf '#!/bin/sh\necho "    Finished \\`release\\` profile [optimized] target(s) in 0.01s" >&2\n' >"$fake/cargo"
chmod +x "$fake"/*
export PATH="$fake:$PATH"
cd "$(dirname "$0")/.."

fail() {
  echo "make-run.sh: $*" >&2
  for f in stdout stderr apt.log; do
    [ -f "$work/$f" ] && { echo "--- $f" >&2; cat "$work/$f" >&2; }
  done
  exit 1
}

make_run() {
  make --no-print-directory run CARGO="$fake/cargo" BIN="$bin" DEPS_LOG="$work/apt.log" RUN_ARGS="$RUN_ARGS" \
    >"$work/stdout" 2>"$work/stderr"
}

make_run || fail "make run failed"
# stdout is exactly the report the run file renders: nothing before it, nothing after.
"$bin" report "$work/run.jsonl" >"$work/report.md" || fail "no report of the run file"
cmp -s "$work/report.md" "$work/stdout" || fail "stdout is not the report alone: $(diff "$work/report.md" "$work/stdout" | head -5)"
head -1 "$work/stdout" | grep -qx '# LMDB Library Performance Analysis' || fail "stdout does not open with the report's title"
# apt-get's output went to the log; stderr has the one line saying what was installed.
[ "$(grep -c '^Get:' "$work/apt.log")" -ge 80 ] || fail "apt-get's output is not in the log"
grep -q '^Get:' "$work/stderr" && fail "apt-get's output reached stderr"
[ "$(grep -c '^install-deps:' "$work/stderr")" -eq 1 ] || fail "not one line about the install"
grep -q "^install-deps: installing gcc .* with apt-get (its output: $work/apt.log)$" "$work/stderr" ||
  fail "the install's line does not say what and where"
grep -qw chromium "$work/stderr" && fail "make run installs chromium, which only the tests use"

# A failing install: its whole output on stderr, the make fails, no report.
rm -f "$work/run.jsonl"
if FAKE_APT_FAIL=lld make_run; then fail "make run succeeded although apt-get failed"; fi
[ -s "$work/stdout" ] && fail "a failed install printed something on stdout"
grep -q '^E: Unable to locate package lld$' "$work/stderr" || fail "apt-get's error is not shown"
[ "$(grep -c '^Get:' "$work/stderr")" -ge 160 ] || fail "apt-get's output is not shown whole"
[ -e "$work/run.jsonl" ] && fail "the run started although the install failed"
echo "make-run.sh: ok"
