#!/usr/bin/env python3
"""Writes testdata/run-many-tags.jsonl: seventeen tags (0.9.17 to 0.9.33), more than a
chart's axis holds side by side, for the browser test's screenshots at 390 and 1280 px
(tests/browser.rs). Made as make-findings-runs.py makes its runs: write takes 10% longer
and does 23.3% more instructions from LMDB_0.9.21 on, readSeq 5% less time from
LMDB_0.9.29 on, its instructions unchanged.

Rerun only to change the fixture."""
import importlib.util
import os

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("findings", os.path.join(here, "make-findings-runs.py"))
findings = importlib.util.module_from_spec(spec)
spec.loader.exec_module(findings)

TAGS = [f"LMDB_0.9.{n}" for n in range(17, 34)]


def stepped(before, after, first):
    return {t: (after if TAGS.index(t) >= TAGS.index(first) else before) for t in TAGS}


findings.run("many-tags", 12, 0.01,
             {"readSeq": stepped(20.0, 19.0, "LMDB_0.9.29"), "write": stepped(75.0, 82.5, "LMDB_0.9.21")},
             {"readSeq": stepped(3_100_000, 3_100_000, "LMDB_0.9.29"),
              "write": stepped(65_000_000, 80_145_000, "LMDB_0.9.21")},
             measured=TAGS, missing=[], path=os.path.join(here, "run-many-tags.jsonl"))
