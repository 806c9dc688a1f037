//! Steps in a history: each measured point against the one measured before it, in commit
//! order; a step is a change beyond the tolerance (the count tolerance for instructions).

/// A change from the point `from` to the point `to` (indices into the series; points in
/// between were not measured).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommitStep {
    pub from: usize,
    pub to: usize,
    /// `to`'s value over `from`'s.
    pub ratio: f64,
}

/// Every step beyond `tolerance` (a fraction: 0.005 is ±0.5%) between consecutive measured
/// points of `values` (None: not measured, skipped).
pub fn steps(values: &[Option<f64>], tolerance: f64) -> Vec<CommitStep> {
    let measured: Vec<(usize, f64)> =
        values.iter().enumerate().filter_map(|(i, v)| v.filter(|x| *x > 0.0).map(|x| (i, x))).collect();
    measured
        .windows(2)
        .map(|w| CommitStep { from: w[0].0, to: w[1].0, ratio: w[1].1 / w[0].1 })
        .filter(|s| (s.ratio - 1.0).abs() > tolerance)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_skip_unmeasured_points_and_keep_within_tolerance_quiet() {
        let v = [Some(100.0), Some(100.2), None, Some(110.0), Some(110.0), Some(99.0)];
        let s = steps(&v, 0.005);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].from, s[0].to), (1, 3));
        assert!((s[0].ratio - 110.0 / 100.2).abs() < 1e-12);
        assert_eq!((s[1].from, s[1].to), (4, 5));
        assert!(steps(&[Some(1.0)], 0.0).is_empty());
        assert!(steps(&[None, Some(1.0), None], 0.0).is_empty());
    }
}
