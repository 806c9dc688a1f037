#!/usr/bin/env python3
"""Writes testdata/findings-{step,time-only,none}.jsonl: three small, deterministic run files
whose findings (the summary every report opens with) are golden (tests/findings.rs), and
testdata/findings-just-inside.jsonl for the gate:

- step: write does 23.3% more instructions from LMDB_0.9.21 on and takes 10% longer;
  0.9.19 and 0.9.20 were asked for and not measured, so the step may lie there too;
- time-only: readSeq 5% faster from LMDB_0.9.22 on, its instructions unchanged;
- none: nothing moves, and eight noisy rounds resolve nothing;
- just-inside: write 1% slower and 1% more instructions from LMDB_0.9.21 on, resolved
  tightly: a change just inside the gate `--fail-on slower:2%` (tests/gate.rs).

Rerun only to change the fixtures."""
import json
import random

H = "a" * 64
FILES = {"lmdb.h": H, "mdb.c": H, "midl.c": H, "midl.h": H}
TC = {"compiler": "/usr/bin/cc", "version": "cc (Debian 12.2.0-14+deb12u1) 12.2.0",
      "cflags": ["-O2", "-g", "-fPIC", "-shared", "-pthread"]}
MEASURED = ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.21", "LMDB_0.9.22", "LMDB_0.9.23"]
UNAVAILABLE = ["LMDB_0.9.19", "LMDB_0.9.20"]


def built(tag):
    prov = f"PyPI sdist lmdb ({tag})"
    return {"tag": tag, "commit": "0" * 40, "status": "built",
            "library": f"/cache/builds/{tag}-so-0000/liblmdb.so", "provenance": prov, "match": "identical",
            "files": FILES, "reason": None,
            "builds": [{"label": tag, "commit": "0" * 40, "kind": "shared-library", "build_id": "0000",
                        "artifact": f"/cache/builds/{tag}-so-0000/liblmdb.so",
                        "lmdb_version": f"LMDB {tag[5:]}: (fixture)", "files": FILES,
                        "provenance": {"origin": "pypi", "detail": prov, "cached": True}, "match": "identical",
                        "toolchain": TC, "built_at": "2026-01-01T00:00:00Z"}]}


def unavailable(tag):
    return {"tag": tag, "commit": "1" * 40, "status": "unavailable", "library": None, "provenance": None,
            "match": None, "files": FILES, "builds": [],
            "reason": "tried registries: no registry package carries this tag; supply it with --git PATH"}


def run(name, rounds, noise, times, counts, measured=MEASURED, missing=UNAVAILABLE, path=None):
    """times and counts: workload -> tag -> centre (ms) / instructions per 100,000 entries;
    written to testdata/findings-NAME.jsonl unless `path` says otherwise
    (make-many-tags-run.py)."""
    tags = sorted([built(t) for t in measured] + [unavailable(t) for t in missing], key=lambda t: t["tag"])
    header = {
        "type": "header", "schema": 1,
        "config": {"entries": 1000000, "value_size": 100, "keys": "int", "order": "seq", "values": "fixed",
                   "no_writemap": False, "sync": False, "seed": 42, "map_size": None},
        "workloads": ["readSeq", "write"], "engines": ["rust"],
        "plan": {"rounds": rounds, "warmup": 1, "time_budget_s": None, "target_ci": None, "iterations": 1,
                 "metric": "time", "count_entries": 100000, "layouts": "random", "layout_seed": 7},
        "tags": tags,
        "environment": {"cpu_model": "Fixture CPU", "cores": 2, "governor": None, "kernel": "6.0.0",
                        "os": "Debian GNU/Linux 12 (bookworm)", "harness_version": "0.1.0",
                        "date": "2026-01-01T00:00:00Z", "command_line": ["lmdb-regress", "run"]},
        "instruction_counter": "callgrind",
    }
    rng = random.Random(name)
    drift = [rng.uniform(-0.01, 0.01) for _ in range(rounds)]
    lines = [header]
    for r in range(rounds):
        for w, by_tag in times.items():
            for t, c in by_tag.items():
                ms = c * (1 + drift[r]) * (1 + rng.uniform(-noise, noise))
                lines.append({"type": "sample", "round": r, "engine": "rust", "tag": t, "workload": w,
                              "ns": int(round(ms * 1e6)), "layout": 1000 + r})
    for w, by_tag in counts.items():
        for t, n in by_tag.items():
            lines.append({"type": "sample", "round": 0, "engine": "rust", "tag": t, "workload": w, "ns": 1,
                          "instructions": n, "counted": True})
    # Ten seconds a round, the warm-up's included.
    lines.append({"type": "end", "reason": "rounds", "rounds": rounds, "finished": "2026-01-01T00:10:00Z",
                  "wall_s": 10.0 * (rounds + 1), "timed_s": 2.0 * (rounds + 1)})
    with open(path or f"testdata/findings-{name}.jsonl", "w") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")


def flat(value):
    return {t: value for t in MEASURED}


def stepped(before, after, first):
    return {t: (after if MEASURED.index(t) >= MEASURED.index(first) else before) for t in MEASURED}


def main():
    run("step", 12, 0.01,
        {"readSeq": flat(20.0), "write": stepped(75.0, 82.5, "LMDB_0.9.21")},
        {"readSeq": flat(3_100_000), "write": stepped(65_000_000, 80_145_000, "LMDB_0.9.21")})
    run("time-only", 12, 0.01,
        {"readSeq": stepped(20.0, 19.0, "LMDB_0.9.22"), "write": flat(75.0)},
        {"readSeq": flat(3_100_000), "write": flat(65_000_000)})
    run("none", 8, 0.08,
        {"readSeq": flat(20.0), "write": flat(75.0)},
        {"readSeq": flat(3_100_000), "write": flat(65_000_000)})
    run("just-inside", 12, 0.002,
        {"readSeq": flat(20.0), "write": stepped(75.0, 75.75, "LMDB_0.9.21")},
        {"readSeq": flat(3_100_000), "write": stepped(65_000_000, 65_650_000, "LMDB_0.9.21")})


if __name__ == "__main__":
    main()
