#!/usr/bin/env python3
"""Writes testdata/run-open-get.jsonl: a small, fully deterministic run file of the open-get
preset (its latency table and chart, counts per cycle from a counting pass), from which the
preset's golden reports under testdata/golden/ are rendered. No LMDB sources: every figure
is made up here. Rerun only to change the fixture."""
import json
import random

H = "b" * 64
files = {"lmdb.h": H, "mdb.c": H, "midl.c": H, "midl.h": H}
tc = {"compiler": "/usr/bin/cc", "version": "cc (Debian 12.2.0-14+deb12u1) 12.2.0",
      "cflags": ["-O2", "-g", "-fPIC", "-shared", "-pthread"]}
TAGS = ["LMDB_0.9.18", "LMDB_0.9.29", "LMDB_0.9.33"]
CYCLES, ENTRIES, COUNT_ENTRIES, ROUNDS = 25, 2000, 400, 8


def status(tag):
    return {"tag": tag, "commit": "0" * 40, "status": "built",
            "library": f"/cache/builds/{tag}-so-0000/liblmdb.so", "provenance": "fixture", "match": "identical",
            "files": files, "reason": None,
            "builds": [{"label": tag, "commit": "0" * 40, "kind": "shared-library", "build_id": "0000",
                        "artifact": f"/cache/builds/{tag}-so-0000/liblmdb.so",
                        "lmdb_version": f"LMDB {tag[5:]}: (fixture)", "files": files,
                        "provenance": {"origin": "pypi", "detail": "fixture", "cached": True},
                        "match": "identical", "toolchain": tc, "built_at": "2026-01-01T00:00:00Z"}]}


header = {
    "type": "header", "schema": 3,
    "config": {"entries": 1000000, "value_size": 100, "keys": "int", "order": "seq", "values": "fixed",
               "no_writemap": False, "sync": False, "seed": 42, "map_size": None,
               "preset": {"entries": ENTRIES, "max_value": 300, "map_size": 16777216, "writemap": False,
                          "sync": False, "open_get_cycles": CYCLES, "open_get_key": 1000,
                          "migrate_append": False}},
    "workloads": ["openGet", "openGetWrite"], "engines": ["rust"],
    "plan": {"rounds": ROUNDS, "warmup": 0, "time_budget_s": None, "target_ci": None, "iterations": 1,
             "metric": "time", "count_entries": COUNT_ENTRIES, "layouts": "fixed"},
    "tags": [status(t) for t in TAGS],
    "environment": {"cpu_model": "Fixture CPU", "cores": 2, "governor": None, "kernel": "6.0.0",
                    "os": "Debian GNU/Linux 12 (bookworm)", "harness_version": "0.1.0",
                    "date": "2026-01-01T00:00:00Z",
                    "command_line": ["lmdb-regress", "run", "--preset", "open-get"]},
    "instruction_counter": "perf_event_open (instructions, user space)",
}
# Per cycle, in microseconds: 0.9.29 opens 10% slower than 0.9.18; 0.9.33 like 0.9.18.
cycle_us = {"LMDB_0.9.18": 40.0, "LMDB_0.9.29": 44.0, "LMDB_0.9.33": 40.4}
write_ms = {"LMDB_0.9.18": 3.10, "LMDB_0.9.29": 3.05, "LMDB_0.9.33": 3.12}
db_bytes = {"LMDB_0.9.18": 1003520, "LMDB_0.9.29": 1003520, "LMDB_0.9.33": 1007616}
# The counting pass: instructions per cycle and per entry written.
per_cycle = {"LMDB_0.9.18": 61000, "LMDB_0.9.29": 67100, "LMDB_0.9.33": 61050}
per_entry = {"LMDB_0.9.18": 2400, "LMDB_0.9.29": 2410, "LMDB_0.9.33": 2405}
read_sum = {"entries": 1, "digest": 8052419537171337262}
write_sum = {"entries": ENTRIES, "digest": 1234567890123456789}

rng = random.Random(10406)
lines = [header]
for r in range(ROUNDS):
    drift = rng.uniform(-0.01, 0.01)
    for t in TAGS:
        lat = [int(round(cycle_us[t] * 1e3 * (1 + drift) * rng.lognormvariate(0, 0.08))) for _ in range(CYCLES)]
        lines.append({"type": "sample", "round": r, "engine": "rust", "tag": t, "workload": "openGet",
                      "ns": sum(lat) // CYCLES, "checksum": read_sum,
                      "figures": {"ops": CYCLES, "latencies_ns": lat, "db_bytes": db_bytes[t]}, "layout": None})
        ms = write_ms[t] * (1 + drift) * (1 + rng.uniform(-0.015, 0.015))
        lines.append({"type": "sample", "round": r, "engine": "rust", "tag": t, "workload": "openGetWrite",
                      "ns": int(round(ms * 1e6)), "checksum": write_sum,
                      "figures": {"ops": ENTRIES, "db_bytes": db_bytes[t]}, "layout": None})
lines.append({"type": "end", "reason": "rounds", "rounds": ROUNDS, "finished": "2026-01-01T00:05:00Z",
              "wall_s": 2.5, "timed_s": 0.05})
for t in TAGS:
    lines.append({"type": "sample", "round": 0, "engine": "rust", "tag": t, "workload": "openGet",
                  "ns": 90000, "instructions": per_cycle[t] * CYCLES, "counted": True,
                  "figures": {"ops": CYCLES, "latencies_ns": [90000] * CYCLES, "db_bytes": db_bytes[t]},
                  "layout": None})
    lines.append({"type": "sample", "round": 0, "engine": "rust", "tag": t, "workload": "openGetWrite",
                  "ns": 9000000, "instructions": per_entry[t] * COUNT_ENTRIES, "counted": True,
                  "figures": {"ops": COUNT_ENTRIES, "db_bytes": db_bytes[t]}, "layout": None})
with open("testdata/run-open-get.jsonl", "w") as f:
    for l in lines:
        f.write(json.dumps(l, separators=(",", ":")) + "\n")
