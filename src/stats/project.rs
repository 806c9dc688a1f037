//! What more rounds would buy: how many a run needs for its intervals to narrow to a
//! given half-width, projected from the half-width it reached.

/// The rounds at which an interval of `half_width` after `rounds` would be `target` wide
/// each side: intervals narrow as 1/√rounds (the rank intervals of `ratio` as a mean's
/// would), so it takes rounds × (half_width / target)². None without rounds or a target.
pub fn rounds_to_reach(half_width: f64, rounds: usize, target: f64) -> Option<usize> {
    if rounds == 0 || target <= 0.0 || !half_width.is_finite() {
        return None;
    }
    let scale = (half_width / target).powi(2).max(1.0);
    Some((rounds as f64 * scale).ceil() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_the_width_takes_four_times_the_rounds() {
        assert_eq!(rounds_to_reach(0.04, 20, 0.02), Some(80));
        assert_eq!(rounds_to_reach(0.057, 83, 0.02), Some(675));
        // A run already there needs no more than it had.
        assert_eq!(rounds_to_reach(0.01, 20, 0.02), Some(20));
        assert_eq!(rounds_to_reach(0.04, 0, 0.02), None);
    }
}
