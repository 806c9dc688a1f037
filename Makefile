# lmdb-regress — `make run` measures, `make test` tests. Both install what they need.
CARGO ?= cargo
BIN := target/release/lmdb-regress

.PHONY: all deps build run test bindings bench-overhead its-10406 clean

all: build

# System packages the C twin and the instruction counter need (Debian; root or sudo).
deps:
	@./scripts/install-deps.sh

build: deps
	$(CARGO) build --release

# The main job: build every available tag, measure all six workloads, print the report.
run: build
	$(BIN) run

test: deps
	$(CARGO) build --release
	$(CARGO) test --release -- --test-threads=2

# Regenerate src/ffi/bindings.rs from LMDB_0.9.33's verified lmdb.h (needs libclang).
bindings: deps
	LMDB_REGRESS_SKIP_MATRIX=1 $(CARGO) build --release
	hdr="$$($(BIN) source-dir LMDB_0.9.33)/lmdb.h" && \
	  LMDB_REGRESS_SKIP_MATRIX=1 $(CARGO) run --release --example gen_bindings -- "$$hdr" src/ffi/bindings.rs

clean:
	$(CARGO) clean
