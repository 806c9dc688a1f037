#!/usr/bin/env python3
"""Independent figures for the fixed run: every baseline delta and control of
testdata/run-fixed.jsonl, computed from the raw samples without lmdb-regress's code
(Walsh averages, the signed-rank null by enumerating all 2^n sign patterns, Bonferroni
over the run: each of a table's k comparisons at 1 - 0.05/(k * tables)).
tests/reports.rs checks the report's JSON against the numbers this prints."""
import itertools, json, math
from collections import defaultdict

rows = [json.loads(l) for l in open("testdata/run-fixed.jsonl")]
vals = defaultdict(dict)
for r in rows:
    if r["type"] == "sample" and not r.get("counted"):
        vals[(r["workload"], r["tag"])][r["round"]] = r["ns"] / 1e6


def cut(n, alpha):
    # P(T+ <= t) by enumerating every sign pattern of ranks 1..n.
    sums = [sum(r for r, s in zip(range(1, n + 1), signs) if s) for signs in itertools.product([0, 1], repeat=n)]
    c = 0
    while sum(1 for s in sums if s <= c) / len(sums) <= alpha / 2 * (1 + 1e-9):
        c += 1
    return c  # P(T+ <= c - 1) <= alpha/2


def paired(a, b, k):
    rounds = sorted(set(a) & set(b))
    d = [math.log(b[r]) - math.log(a[r]) for r in rounds]
    w = sorted((d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d)))
    m = len(w)
    est = (w[m // 2] if m % 2 else (w[m // 2 - 1] + w[m // 2]) / 2)
    c = cut(len(d), 0.05 / k)
    return math.exp(est), math.exp(w[c - 1]), math.exp(w[m - c])


out = {}
workloads = ["readSeq", "write"]
for wl in workloads:
    tags = ["LMDB_0.9.17", "LMDB_0.9.18", "LMDB_0.9.33"]
    k = (len(tags) - 1) * len(workloads)
    for t in tags[1:]:
        out[f"{wl} {t} vs LMDB_0.9.17"] = paired(vals[(wl, "LMDB_0.9.17")], vals[(wl, t)], k)
    out[f"{wl} LMDB_0.9.33~control vs LMDB_0.9.33"] = paired(vals[(wl, "LMDB_0.9.33")], vals[(wl, "LMDB_0.9.33~control")], k)
for key, (r, lo, hi) in out.items():
    print(f"{key}: ratio {r:.9f} interval [{lo:.9f}, {hi:.9f}]")
