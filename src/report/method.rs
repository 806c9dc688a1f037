//! The report's method in words: how the run measured (design, layouts, caches, bursts)
//! and how its figures are judged, as every format lists it.

use super::cells::{baseline_named, harness_orders, named, per_sample_layouts, within};
use super::model::ReportModel;
use super::numbers::thousands;
use crate::record::{Layouts, Metric, Pairing};

/// How deltas were judged, in words every human format carries.
pub fn method_lines(m: &ReportModel) -> Vec<String> {
    let me = 100.0 * m.rule.min_effect;
    let ct = 100.0 * m.rule.count_tolerance;
    let mut v = Vec::new();
    if !m.rule.counts {
        v.extend(design_lines(m));
        v.extend(passes_line(m));
        v.extend(commits_paired_line(m));
        v.push(format!(
            "A round is a block: a delta is the Hodges-Lehmann estimate of the per-round ratio, with the interval that inverts \
             Wilcoxon's signed-rank test. Intervals are simultaneous at 95% over the run's {} \
             (Bonferroni: each of a table's k at 1 - 0.05/(k*{}); the ranked tables count all pairs of tags, \
             because the fastest is chosen after seeing the data), so a run is as unlikely to claim a false \
             difference anywhere as in one table. slower/faster: the interval excludes \
             1. same: the interval lies within {}. inconclusive: neither; the run did \
             not resolve the difference.",
            tables_named(m.rule.tables),
            m.rule.tables,
            within(me)
        ));
        v.push(
            "Rank: 1 + the number of tags resolved faster; tags the fastest does not resolve share its rank. \
             Order and vs Fastest: the same estimate, against the tag no other beats by it."
                .into(),
        );
        v.push(layouts_line(m));
    } else {
        let counts = match m.unit.metric {
            Metric::Instructions => "Instruction counts".to_string(),
            other => format!("Counts of {}", other.name()),
        };
        v.push(format!(
            "{counts} in the timed region are exact: a delta beyond {} is \
             slower or faster, within it same. No test, no p-value.",
            within(ct)
        ));
    }
    let built = m.toolchains.iter().flat_map(|t| &t.rows).map(|r| &r.label);
    if let Some(example) = built.clone().find(|l| l.compared_as().1.is_some()) {
        v.push(format!(
            "Toolchains: a build by any toolchain but the default carries its name after the tag \
             (\"{}\"). The tables against {} compare each build with {}'s build by the same \
             toolchain. A toolchain table compares one tag's builds with its reference \
             toolchain's, by the same method and verdicts, the table one family.",
            named(example),
            baseline_named(m),
            baseline_named(m)
        ));
    }
    if m.has_counts() {
        let orders = harness_orders(m);
        let cause = match per_sample_layouts(m) {
            true if orders > 0 => format!(
                "Every sample ran its own layout of LMDB's code, and each process one of {orders} function \
                 orders of its worker's own code (the Rust worker's timed loops and checksum crates, or the C \
                 paired worker's) drawn at random, so \
                 code placement is sampled, not fixed: the cause is memory or cache behaviour, machine \
                 noise, or placement beyond what those layouts sample, not more work in LMDB"
            ),
            true => "Every sample ran its own layout of LMDB's code, so LMDB's code placement is averaged \
                     out; the tool's own timed loops keep one placement per build of the tool, which moved \
                     readCrc and readXxh64 comparisons by 2-4% between builds (reports/README.md): the \
                     cause is that placement, memory or cache behaviour, or machine noise, not more work \
                     in LMDB"
                .to_string(),
            false => "Each tag ran one fixed code layout, so the cause may be that layout's code \
                      placement, or memory or cache behaviour, or machine noise, not more work in LMDB \
                      (--layouts random averages placement out)"
                .to_string(),
        };
        v.push(format!(
            "instr: the instruction delta of the same two tags (one counting pass, {} entries, \
             per entry). \"time only\": time moved while instructions stayed within {}. {cause}.",
            m.plan.count_entries.unwrap_or(m.config.entries),
            within(ct)
        ));
    }
    if std::iter::once(m.unit.metric).chain(m.beside.iter().copied()).any(Metric::needs_cache_sim) {
        v.push(cache_line(m));
    }
    v.push(super::coverage::method_line(m));
    v
}

/// What the cache metrics are and what their simulation cannot see.
fn cache_line(m: &ReportModel) -> String {
    format!(
        "D1mis, LLmis, cycles: callgrind's cache simulation (--cache-sim=yes) of the timed region, per entry: \
         D1 misses are data reads and writes missing the first-level data cache; LL misses, instruction \
         fetches and data missing the last level; estimated cycles are L1 hits + 5 x LL hits + 35 x RAM \
         hits (Itamar Turner-Trauring's formula, as iai-callgrind computes it). The caches simulated: {}. \
         The simulated caches run from the process's start, warmed by whatever ran before a workload in \
         its process (its verification, the workloads before it), as the real ones are; units are counted \
         in the same order, so comparisons are like with like. The simulation is one core's, inclusive \
         and LRU, and deterministic like instruction counts (to a miss or two between processes); it \
         cannot see hardware prefetching, the TLB, branch prediction, the clock frequency or other \
         tenants' traffic, so it is a second witness for a time change, not its measure.",
        m.instruction_counter
            .as_deref()
            .and_then(|c| c.split_once("caches: "))
            .map(|(_, c)| c)
            .unwrap_or("as callgrind took them from the host CPU (not recorded in this run)")
    )
}

/// " The baseline ran in up to 3 layouts ...", where a process held more than one of it;
/// " Every unit ran in up to 16 layouts ..." with several layouts of every unit.
fn reference_layouts_line(m: &ReportModel) -> String {
    let (most, on) = super::cells::reference_layouts(m);
    if on.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = on.iter().map(|w| w.name()).collect();
    if m.plan.layouts_per_process > 1 {
        return format!(
            " Every unit ran in up to {most} layouts in one paired process on {} (--layouts-per-process {}), \
             layout k of each timing chunks k, k+{most}, k+{}, … of the pass through a link of its own to a \
             read database of the unit's family, a unit's layouts on as many of the family's files as they \
             could be (where a file lies in memory moves a walk as a layout does), and a unit's \
             value for a process was the mean over its layouts of each one's median chunk ratio to the \
             reference's layout of the same place: the mean of several narrows what one layout and one file \
             put into a comparison.",
            names.join(", "),
            m.plan.layouts_per_process,
            2 * most
        );
    }
    format!(
        " The reference ran in up to {most} layouts in one paired process on {} (--reference-layouts {}), \
         each timing every chunk, and each other tag's pass was compared with each of them chunk by chunk, \
         its value the mean of those median ratios: the reference's layout is in every comparison of its \
         process, and the mean of several narrows them all.",
        names.join(", "),
        m.plan.reference_layouts
    )
}

/// How the code was laid out, and what that does to the intervals.
fn layouts_line(m: &ReportModel) -> String {
    if let Some(study) = &m.plan.layout_study {
        return format!(
            "Layouts: a study of {} under {} code layouts (lld --shuffle-sections of one build's \
             functions), each a label of its own measured in every round with the same layout; \
             layout spread: how much their times differ beyond the per-sample noise.",
            named(&study.tag),
            study.layouts.len()
        );
    }
    match (m.plan.layouts, m.plan.layout_seed) {
        (Layouts::Random, seed) => format!(
            "Layouts: every sample ran its own code layout (lld --shuffle-sections of the \
             functions, no two alike in a run, drawn with the run's seed {}; each sample records \
             its own), so code placement is part of each round's noise instead of a fixed \
             property of each tag's one binary. That widens the intervals - a difference one \
             layout would show is averaged over many - and is what makes a verdict about LMDB \
             rather than about two binaries.{}",
            seed.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            reference_layouts_line(m)
        ),
        (Layouts::Fixed, _) => "Layouts: fixed - each tag ran its one build (its compiler's function order) \
             in every round, so a time verdict holds for those binaries and may be their code \
             placement's rather than LMDB's."
            .into(),
    }
}

/// How the two engines of the overhead table ran: each design compares like with like.
pub fn overhead_design(m: &ReportModel) -> &'static str {
    match m.plan.pairing {
        Pairing::Chunks => {
            "Both load each tag's shared library and run its passes in chunks, each engine's tags in a paired \
             process of their own every round (the C twin's paired worker, harness/paired.c)."
        }
        Pairing::Process => {
            "Each runs a process per tag and round, its pass whole: the Rust worker loading the tag's shared \
             library, the C twin linked statically with the tag's sources."
        }
    }
}

/// How the time samples were paired, per design the sections used.
fn design_lines(m: &ReportModel) -> Vec<String> {
    let used = |p: Pairing| m.sections.iter().any(|s| s.pairing == p);
    let both = used(Pairing::Chunks) && used(Pairing::Process);
    let which = |p: Pairing| match both {
        true => format!(" ({})", sections_of(m, p)),
        false => String::new(),
    };
    let mut v = Vec::new();
    if used(Pairing::Chunks) {
        let crews = m.sections.iter().any(|s| s.workload.is_crew());
        let chunk = match m.plan.chunk {
            // Readers beside a writer: a chunk is an interval of the crew's threads.
            _ if crews => format!("intervals of {} ms (the chunks)", m.config.preset.interval_ms),
            Some(c) => format!("chunks of {} operations", thousands(u64::from(c))),
            None => "chunks".into(),
        };
        v.push(format!(
            "Paired in one process{}: each round is one process (per engine) holding every tag, each workload's \
             passes split into {chunk} and alternated between the tags, every round of chunks in a \
             fresh shuffled order, each chunk timed alone. A tag's value for a round is the median \
             ratio of its chunks to the same chunk round's chunks of one reference tag, so noise \
             that moves at the scale of milliseconds cancels; placement and layout vary between \
             processes, so the process is the unit of replication and intervals are built over \
             rounds. ms/op is the time of the whole pass (the sum of its chunks).",
            which(Pairing::Chunks)
        ));
        if crews && m.config.preset.reader_procs {
            v.push(
                "Readers in processes (--reader-procs): each crew's readers were processes of their own, one \
                 reader thread each, sharing the environment's lock file and reader table with the paired \
                 process, whose writer thread they started and stopped with at every interval's bounds."
                    .into(),
            );
        }
    }
    if used(Pairing::Chunks) && !m.shards.is_empty() {
        v.push(format!(
            "Merged from {} shards, each of which measured {} beside its own tags, in processes of \
             its own on its own machine: a tag is compared with {} inside its shard's processes, \
             and tags of different shards through their comparisons with it (the two-sample \
             form of the method), never by their times across machines.",
            m.shards.len(),
            baseline_named(m),
            baseline_named(m)
        ));
    }
    if used(Pairing::Process) {
        v.push(format!(
            "One process per tag and round{}: each round runs every tag once in shuffled order, \
             each in a worker process of its own, its pass whole.",
            which(Pairing::Process)
        ));
    }
    v
}

/// The rows that made several passes in each unit's process, and what a round's value is
/// of them; None when every workload made one an iteration.
fn passes_line(m: &ReportModel) -> Option<String> {
    let rows: Vec<String> = m.plan.passes.iter().map(|(w, n)| format!("{} {n}", w.name())).collect();
    (!rows.is_empty()).then(|| {
        format!(
            "Passes: a row whose commits were timed and of fewer than {} commits a pass made several \
             passes in each unit's process, each on a fresh environment ({} an iteration); \
             a unit's value for a round is the median of its passes' figures.",
            crate::workload::presets::lmdb_suite::declared::FEW_COMMITS,
            rows.join(", ")
        )
    })
}

/// How a run of a commit metric paired its passes' commits, in the sections whose samples
/// kept their order; None for other runs, and for files from before the order was kept.
fn commits_paired_line(m: &ReportModel) -> Option<String> {
    let metric = m.unit.metric;
    let ordered = |s: &&super::model::Section| {
        m.samples.iter().any(|x| x.workload == s.workload && !x.chunk_values(metric).is_empty())
    };
    let mut paired: Vec<&str> = Vec::new();
    for s in m.sections.iter().filter(|s| metric.is_commits() && s.pairing == Pairing::Process).filter(ordered) {
        if !paired.contains(&s.workload.name()) {
            paired.push(s.workload.name());
        }
    }
    (!paired.is_empty()).then(|| {
        format!(
            "Commits paired by their place in the pass ({}): a pass's commits ramp with its growing tree, so \
             a unit's value for a round, as comparisons take it, is the median, over every commit of the \
             round's passes, of commit k's ratio to commit k of the reference's pass in the same place (its \
             1st pass's 1st commit with the reference's 1st pass's 1st), times the reference's median: like \
             is compared with like, and a stretch of commits that met a busy disk, or a whole pass, moves \
             only its own share of the ratios, where it moves a pass's median. The tables show each unit's \
             own median commit.",
            paired.join(", ")
        )
    })
}

/// The section titles of one design, for a method line.
fn sections_of(m: &ReportModel, p: Pairing) -> String {
    let names: Vec<&str> = m.sections.iter().filter(|s| s.pairing == p).map(|s| s.workload.name()).collect();
    names.join(", ")
}

/// "6 tables of each kind", or "one table of each kind".
fn tables_named(n: usize) -> String {
    match n {
        1 => "one table of each kind".to_string(),
        n => format!("{n} tables of each kind"),
    }
}
