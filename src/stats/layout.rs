//! How much code layout alone moves a time: the spread between layouts of identical code,
//! as a fraction, `exp(σ) − 1` of the standard deviation σ of the layouts' effect on log
//! time (as `family` gives the noise). Estimated by analysis of variance on log values where
//! the run's design allows it; otherwise not at all (None), never guessed.

use std::collections::{BTreeMap, BTreeSet};

use super::family::{robust_sd, Rounds};
use super::median;

/// A complete table of log values, rows by columns: the mean squares of the rows and of
/// the residual after rows and columns (two-way analysis of variance, one value a cell).
fn two_way(table: &[Vec<f64>]) -> Option<(f64, f64)> {
    let (r, c) = (table.len(), table.first()?.len());
    if r < 2 || c < 2 || table.iter().any(|row| row.len() != c) {
        return None;
    }
    let mean = |xs: &mut dyn Iterator<Item = f64>, n: usize| xs.sum::<f64>() / n as f64;
    let grand = mean(&mut table.iter().flatten().copied(), r * c);
    let rows: Vec<f64> = table.iter().map(|row| mean(&mut row.iter().copied(), c)).collect();
    let cols: Vec<f64> = (0..c).map(|j| mean(&mut table.iter().map(|row| row[j]), r)).collect();
    let ss_rows = c as f64 * rows.iter().map(|m| (m - grand).powi(2)).sum::<f64>();
    let ss_resid: f64 = (0..r)
        .flat_map(|i| (0..c).map(move |j| (i, j)))
        .map(|(i, j)| (table[i][j] - rows[i] - cols[j] + grand).powi(2))
        .sum();
    Some((ss_rows / (r - 1) as f64, ss_resid / ((r - 1) * (c - 1)) as f64))
}

/// The rows of `values` (label → round → value) as logs, over the rounds every label has.
fn complete_logs<K>(values: &BTreeMap<K, Rounds>) -> Option<Vec<Vec<f64>>> {
    let mut rounds: Option<BTreeSet<u32>> = None;
    for r in values.values() {
        let have: BTreeSet<u32> = r.keys().copied().collect();
        rounds = Some(rounds.map_or(have.clone(), |acc| acc.intersection(&have).copied().collect()));
    }
    let rounds = rounds?;
    let logs = values.values().map(|r| rounds.iter().map(|k| r[k]).filter(|v| *v > 0.0).map(f64::ln).collect());
    let table: Vec<Vec<f64>> = logs.collect();
    table.iter().all(|row: &Vec<f64>| row.len() == rounds.len()).then_some(table)
}

fn spread(variance: f64) -> f64 {
    variance.max(0.0).sqrt().exp_m1()
}

/// Row effects and residuals of a complete table by one sweep of Tukey's median polish:
/// each column's median taken out, then each row's.
fn median_polish(table: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
    let cols = table.first().map_or(0, Vec::len);
    let col_effects: Vec<f64> =
        (0..cols).map(|j| median(&table.iter().map(|row| row[j]).collect::<Vec<_>>())).collect();
    let centred: Vec<Vec<f64>> =
        table.iter().map(|row| row.iter().zip(&col_effects).map(|(x, c)| x - c).collect()).collect();
    let rows: Vec<f64> = centred.iter().map(|row| median(row)).collect();
    let residuals = centred.iter().zip(&rows).flat_map(|(row, a)| row.iter().map(move |x| x - a)).collect();
    (rows, residuals)
}

/// A layout study: several layouts of one build, each a label measured in the same rounds.
/// Robustly, as the run's noise is given: each round's median over the layouts is taken out
/// (drift), each layout's effect is its median over the rounds, and the per-sample noise is
/// the residuals' robust spread (1.4826 × MAD). The layouts' variance is their effects'
/// variance less what the noise puts into a median of that many rounds (π/2 · σ² / rounds),
/// at least 0. None below two layouts or two complete rounds.
pub fn across_layouts<K>(layouts: &BTreeMap<K, Rounds>) -> Option<f64> {
    let table = complete_logs(layouts)?;
    let rounds = table.first()?.len();
    if table.len() < 2 || rounds < 2 {
        return None;
    }
    let (effects, residuals) = median_polish(&table);
    let mean = effects.iter().sum::<f64>() / effects.len() as f64;
    let between = effects.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (effects.len() - 1) as f64;
    let noise = robust_sd(&residuals);
    Some(spread(between - std::f64::consts::FRAC_PI_2 * noise * noise / rounds as f64))
}

/// Random layouts with repetitions inside each worker (`--iterations N`): every worker runs
/// a layout of its own, so what a label's workers differ by beyond their repetitions' spread,
/// once the rounds' drift (common to all labels) is taken out, is layout — together with
/// whatever else changes from one process to the next (address-space randomisation, page
/// placement). `workers`: label → round → that worker's repetitions. The residual of the
/// two-way table of worker means, less the repetitions' variance over their number, at
/// least 0. None below two labels, two complete rounds, or two repetitions a worker.
pub fn between_workers<K: Ord + Clone>(workers: &BTreeMap<K, BTreeMap<u32, Vec<f64>>>) -> Option<f64> {
    let (mut within_ss, mut within_df, mut reps) = (0.0, 0usize, Vec::new());
    let mut means: BTreeMap<K, Rounds> = BTreeMap::new();
    for (label, rounds) in workers {
        for (round, xs) in rounds.iter().filter(|(_, xs)| xs.len() >= 2 && xs.iter().all(|x| *x > 0.0)) {
            let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            within_ss += logs.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            within_df += logs.len() - 1;
            reps.push(logs.len() as f64);
            means.entry(label.clone()).or_default().insert(*round, m.exp());
        }
    }
    if within_df == 0 {
        return None;
    }
    let per_worker = reps.iter().sum::<f64>() / reps.len() as f64;
    let (_, ms_resid) = two_way(&complete_logs(&means)?)?;
    Some(spread(ms_resid - within_ss / within_df as f64 / per_worker))
}

/// Several layouts of each unit in one process (`--layouts-per-process K`): layout k of
/// every unit times the same chunks, so each chunk of a label's layout, over the
/// reference's layout of the same place, is a ratio from which the moment's noise and the
/// chunk's own cost are gone, leaving the two layouts' effects and the chunk's noise. Each
/// layout's mean log ratio over its chunks at even places and at odd ones, both less the
/// mean over the process's layouts: the noise of the two halves is independent and the
/// layouts' effects are in both, so their covariance over the layouts of every process
/// is the variance of a difference of two layouts' effects, twice one layout's. `passes`:
/// label → round → its layouts' chunk values in place order; `reference` the label every
/// other is over. None without two labels of two or more layouts with four chunks each.
pub fn within_processes<K: Ord>(passes: &BTreeMap<K, BTreeMap<u32, Vec<Vec<f64>>>>, reference: &K) -> Option<f64> {
    let base = passes.get(reference)?;
    let (mut cross, mut df) = (0.0, 0usize);
    for rounds in passes.iter().filter(|(l, _)| *l != reference).map(|(_, r)| r) {
        for (round, layouts) in rounds {
            let Some(halves) = base.get(round).and_then(|b| halves(b, layouts)) else { continue };
            let k = halves.len() as f64;
            let (a, b) = halves.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / k, b + y / k));
            cross += halves.iter().map(|(x, y)| (x - a) * (y - b)).sum::<f64>();
            df += halves.len() - 1;
        }
    }
    (df > 0).then(|| spread(cross / df as f64 / 2.0))
}

/// Each layout's mean log ratio to the reference's layout of its place, over its chunks
/// at even places and at odd ones; None unless both have two or more layouts alike, and
/// every layout four or more chunks.
fn halves(base: &[Vec<f64>], layouts: &[Vec<f64>]) -> Option<Vec<(f64, f64)>> {
    if layouts.len() < 2 || base.len() != layouts.len() {
        return None;
    }
    let half = |logs: &[f64], odd: usize| {
        let xs: Vec<f64> = logs.iter().skip(odd).step_by(2).copied().collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    base.iter()
        .zip(layouts)
        .map(|(b, l)| {
            let logs: Vec<f64> = b.iter().zip(l).map(|(b, x)| (x / b).ln()).collect();
            (logs.len() >= 4 && logs.iter().all(|x| x.is_finite())).then(|| (half(&logs, 0), half(&logs, 1)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    use crate::stats::standard_normal as normal;

    #[test]
    fn a_study_recovers_the_layouts_spread_beside_drift_and_noise() {
        // 8 layouts, 5% apart (σ), 40 rounds with ±10% drift, 2% per-sample noise.
        let mut rng = Pcg64::seed_from_u64(16);
        let effects: Vec<f64> = (0..8).map(|_| 0.05 * normal(&mut rng)).collect();
        let drift: Vec<f64> = (0..40).map(|_| 0.10 * normal(&mut rng)).collect();
        let table: BTreeMap<String, Rounds> = effects
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let rounds =
                    drift.iter().enumerate().map(|(r, d)| (r as u32, (4.0 + e + d + 0.02 * normal(&mut rng)).exp()));
                (format!("L@{i}"), rounds.collect())
            })
            .collect();
        let sd = |xs: &[f64]| {
            let m = xs.iter().sum::<f64>() / xs.len() as f64;
            (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
        };
        let got = across_layouts(&table).unwrap();
        let truth = sd(&effects).exp_m1();
        assert!((got - truth).abs() < 0.005, "estimated {got}, the layouts' own spread {truth}");
        // Bursts: three samples of one layout at 2.5 times move the estimate little.
        let mut burst = table.clone();
        for r in [3, 17, 29] {
            *burst.get_mut("L@0").unwrap().get_mut(&r).unwrap() *= 2.5;
        }
        let with_bursts = across_layouts(&burst).unwrap();
        assert!((with_bursts - got).abs() < 0.005, "{got} became {with_bursts}");
        // Identical layouts: nothing beyond the noise.
        let same: BTreeMap<String, Rounds> = table
            .keys()
            .map(|k| (k.clone(), drift.iter().enumerate().map(|(r, d)| (r as u32, (4.0 + d).exp())).collect()))
            .collect();
        assert_eq!(across_layouts(&same), Some(0.0));
        assert_eq!(across_layouts(&table.clone().into_iter().take(1).collect()), None);
    }

    /// 8 layouts of each of 4 labels in 30 processes, 8 chunks each: every layout its
    /// effect (σ 5%), every chunk of every unit ±8% noise, each process its drift along
    /// the chunks and each chunk its own cost, both shared by the units.
    fn processes(layout_sd: f64, seed: u64) -> BTreeMap<&'static str, BTreeMap<u32, Vec<Vec<f64>>>> {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut out: BTreeMap<&str, BTreeMap<u32, Vec<Vec<f64>>>> = BTreeMap::new();
        for r in 0..30u32 {
            let moment: Vec<f64> = (0..64).map(|i| 0.2 * normal(&mut rng) + 0.01 * i as f64).collect();
            for (t, label) in ["ref", "a", "b", "c"].into_iter().enumerate() {
                let layouts = (0..8)
                    .map(|k| {
                        let effect = layout_sd * normal(&mut rng) + 0.03 * t as f64;
                        let mut chunk = |i: usize| (1.0 + moment[i] + effect + 0.08 * normal(&mut rng)).exp();
                        (0..8).map(|c| chunk(k + 8 * c)).collect()
                    })
                    .collect();
                out.entry(label).or_default().insert(r, layouts);
            }
        }
        out
    }

    #[test]
    fn layouts_in_one_process_show_their_spread_beyond_the_chunks_noise() {
        let got = within_processes(&processes(0.05, 3), &"ref").unwrap();
        assert!((0.035..0.065).contains(&got), "{got}");
        let none = within_processes(&processes(0.0, 4), &"ref").unwrap();
        assert!(none < 0.02, "layouts alike, chunks ±8%: {none}");
        let one: BTreeMap<&str, BTreeMap<u32, Vec<Vec<f64>>>> = processes(0.05, 5)
            .into_iter()
            .map(|(t, rs)| (t, rs.into_iter().map(|(r, ls)| (r, ls[..1].to_vec())).collect()))
            .collect();
        assert_eq!(within_processes(&one, &"ref"), None, "one layout a process");
    }

    #[test]
    fn workers_with_repetitions_show_their_layouts_beyond_the_repetitions() {
        // 3 labels, 30 rounds, each worker its own layout (σ 6%), 5 repetitions at 2%, drift.
        let mut rng = Pcg64::seed_from_u64(9);
        let mut workers: BTreeMap<String, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
        for r in 0..30u32 {
            let drift = 0.1 * normal(&mut rng);
            for t in ["a", "b", "c"] {
                let layout = 0.06 * normal(&mut rng);
                let reps = (0..5).map(|_| (3.0 + drift + layout + 0.02 * normal(&mut rng)).exp()).collect();
                workers.entry(t.to_string()).or_default().insert(r, reps);
            }
        }
        let got = between_workers(&workers).unwrap();
        assert!((0.045..0.075).contains(&got), "{got}");
        // One repetition a worker: nothing to tell layout from per-sample noise.
        let single: BTreeMap<String, BTreeMap<u32, Vec<f64>>> = workers
            .iter()
            .map(|(t, rs)| (t.clone(), rs.iter().map(|(r, xs)| (*r, xs[..1].to_vec())).collect()))
            .collect();
        assert_eq!(between_workers(&single), None);
    }
}
