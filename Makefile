# lmdb-regress — `make run` measures, `make test` tests. Each installs what it needs,
# quietly (scripts/install-deps.sh: apt-get's output goes to $(DEPS_LOG)).
# `make run > report.md` holds the report alone: the recipes it runs are silent (@) and
# say what they run on stderr, where cargo and the tool write all else.
CARGO ?= cargo
BIN := target/release/lmdb-regress
export DEPS_LOG ?= target/install-deps.log
# Tags for the harness-overhead benchmark (registry-reachable, so it runs anywhere).
OVERHEAD_TAGS ?= 0.9.18,0.9.24,0.9.33

.PHONY: all deps deps-test build run test bindings bench-overhead its-10406 clean

all: build

# System packages (apt-get): what running needs (gcc, lld for random code layouts,
# valgrind, git, pip); the tests' also clang, the C twin's libraries, libclang, chromium.
deps:
	@./scripts/install-deps.sh run

deps-test:
	@./scripts/install-deps.sh test

build: deps
	@echo "$(CARGO) build --release" >&2
	@$(CARGO) build --release

# The main job: build every available tag, measure the six workloads, count their
# instructions once (so every time delta has its instruction delta), print the report.
# Rounds for 3 minutes after the builds (then the counting pass): each round is one process
# holding every tag, the passes alternated chunk by chunk, which resolves 4-7 times finer
# per minute than a process per tag (reports/README.md, "Paired measurement"), so that a
# fresh machine's first make run, cold build included, stays near 10 minutes.
# Set LMDB_GIT to a clone of OpenLDAP's repository to include the tags no registry carries.
# `run` holds sixteen layouts of each unit a process by default (--layouts-per-process).
RUN_BUDGET ?= 3m
RUN_ARGS ?= --with-instructions --rounds 1000 --time-budget $(RUN_BUDGET)
# `run` itself puts each unit's data files in memory (/dev/shm, where it is a tmpfs with
# room) when nothing the unit measures needs a disk: on ext4 the kernel's writeback of one
# unit's data file ran beside the next unit's timed write pass, and the same 5 minutes gave
# 21 rounds against 56 in memory (idle AMD EPYC, reports/README.md).
run: build
	@echo "$(BIN) run $(RUN_ARGS)" >&2
	@$(BIN) run $(RUN_ARGS)

# Tests never write the user's cache: the build matrix and the tests' shared fixture live
# under target/, and each test copies what it needs into a cache of its own.
test: export LMDB_REGRESS_CACHE := $(CURDIR)/target/tmp/fixture-cache
# One cargo invocation: it builds the binary the tests run (target/tests/lmdb-regress)
# with the same features as the tests, and build.rs builds the tag matrix once, into the
# fixture the tests reuse (a separate `cargo build` first rebuilt the crate and re-ran
# build.rs under the dev-dependencies' features; tests/makefile.rs fails if the matrix is
# built twice). The `tests` profile (Cargo.toml) is release, less optimised: its own
# target folder, so `make run`'s release build and this one never undo each other.
TEST_ARGS ?=
test: deps-test
	$(CARGO) test --profile tests -- --test-threads=2 $(TEST_ARGS)

# ITS#10406 natively: the report's write benchmark on every tag, verdicts on its claims.
its-10406: build
	$(BIN) its-10406

# The Rust harness against its C twin on three tags at the default size; the report's
# "Harness overhead" table gives Rust / C per workload with its interval. In time both
# engines run paired rounds (the C twin's paired worker, harness/paired.c, on the same
# shared libraries the Rust worker loads); in instructions retired, which does not wander
# with the machine's load, a process per unit (the C twin linked statically per tag).
# Each run replaces the previous run's files (--force).
bench-overhead: build
	@./scripts/install-deps.sh c
	$(BIN) run --engine rust,c --tags $(OVERHEAD_TAGS) --rounds 20 --force --out reports/runs/bench-overhead.jsonl > /dev/null
	$(BIN) report reports/runs/bench-overhead.jsonl --format markdown,text,json --force --out-dir reports
	@awk '/HARNESS OVERHEAD/{p=1} /^(PROBLEMS|TEST ENVIRONMENT)$$/{p=0} p' reports/bench-overhead.txt
	# The same by instructions retired (callgrind where perf is not allowed): once per unit, 100k entries.
	$(BIN) run --engine rust,c --tags $(OVERHEAD_TAGS) --metric instructions \
	  --force --out reports/runs/bench-overhead-instructions.jsonl > /dev/null
	$(BIN) report reports/runs/bench-overhead-instructions.jsonl --format markdown,text,json --force --out-dir reports
	@awk '/HARNESS OVERHEAD/{p=1} /^(PROBLEMS|TEST ENVIRONMENT)$$/{p=0} p' reports/bench-overhead-instructions.txt

# Regenerate src/ffi/bindings.rs from LMDB_0.9.33's verified lmdb.h (needs libclang).
bindings: deps
	@./scripts/install-deps.sh bindings
	LMDB_REGRESS_SKIP_MATRIX=1 $(CARGO) build --release
	hdr="$$($(BIN) source-dir LMDB_0.9.33)/lmdb.h" && \
	  LMDB_REGRESS_SKIP_MATRIX=1 $(CARGO) run --release --example gen_bindings -- "$$hdr" src/ffi/bindings.rs

clean:
	$(CARGO) clean
