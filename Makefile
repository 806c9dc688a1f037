# lmdb-regress — `make run` measures, `make test` tests. Both install what they need.
CARGO ?= cargo
BIN := target/release/lmdb-regress
# Tags for the harness-overhead benchmark (registry-reachable, so it runs anywhere).
OVERHEAD_TAGS ?= 0.9.18,0.9.24,0.9.33

.PHONY: all deps build run test bindings bench-overhead its-10406 clean

all: build

# System packages: gcc, clang, lld (random code layouts), the C twin's checksum libraries,
# valgrind, libclang (apt-get).
deps:
	@./scripts/install-deps.sh

build: deps
	$(CARGO) build --release

# The main job: build every available tag, measure the six workloads, count their
# instructions once (so every time delta has its instruction delta), print the report.
# Rounds for 9 minutes after the builds (then the counting pass): more rounds of one pass
# each resolve more per minute than repetitions, layouts per round or short blocks
# (reports/README.md, "Resolution per minute").
# Set LMDB_GIT to a clone of OpenLDAP's repository to include the tags no registry carries.
RUN_BUDGET ?= 9m
run: build
	$(BIN) run --with-instructions --rounds 1000 --time-budget $(RUN_BUDGET)

# Tests never write the user's cache: the build matrix and the tests' shared fixture live
# under target/, and each test copies what it needs into a cache of its own.
test: export LMDB_REGRESS_CACHE := $(CURDIR)/target/tmp/fixture-cache
# One cargo invocation: it builds the binary the tests run (target/release/lmdb-regress)
# with the same features as the tests, so nothing is compiled twice (a separate
# `cargo build` first rebuilt the crate and re-ran build.rs under the dev-dependencies'
# features: 87 s and 46 s of the second build's units by `cargo --timings`, on the Xeon).
test: deps
	$(CARGO) test --release -- --test-threads=2

# ITS#10406 natively: the report's write benchmark on every tag, verdicts on its claims.
its-10406: build
	$(BIN) its-10406

# The Rust harness against its C twin on three tags at the default size; the report's
# "Harness overhead" table gives Rust / C per workload with its interval. Then the same
# comparison in instructions retired, which does not wander with the machine's load.
# Each run replaces the previous run's files (--force).
bench-overhead: build
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
	LMDB_REGRESS_SKIP_MATRIX=1 $(CARGO) build --release
	hdr="$$($(BIN) source-dir LMDB_0.9.33)/lmdb.h" && \
	  LMDB_REGRESS_SKIP_MATRIX=1 $(CARGO) run --release --example gen_bindings -- "$$hdr" src/ffi/bindings.rs

clean:
	$(CARGO) clean
