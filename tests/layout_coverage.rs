//! Method evidence (simulated, seeded): with every sample on a code layout of its own, the
//! per-round paired intervals still cover the true ratio at the sizes (layout ±5–9%
//! on readKey, ±4% on write, per-sample noise 3–8%), while one fixed layout per tag does not.

#[path = "layout_sim/mod.rs"]
mod layout_sim;

use layout_sim::{cells, simulate};

#[test]
fn intervals_cover_when_each_sample_has_its_own_layout() {
    for (i, c) in cells().into_iter().enumerate() {
        let random = simulate(c, true, 4000, 20, 100 + i as u64);
        eprintln!("{}, layout {}, noise {}: random layouts {random:?}", c.workload, c.layout, c.noise);
        assert!(random.coverage >= 0.94, "{c:?}: coverage {} below 0.94", random.coverage);
    }
}

#[test]
fn one_fixed_layout_per_tag_misses_the_truth_where_layout_outweighs_noise() {
    // readKey's ±9% layouts at 3% noise: one binary per tag is a verdict on two binaries.
    let c = cells().into_iter().find(|c| c.layout == 0.09 && c.noise == 0.03).unwrap();
    let (random, fixed) = (simulate(c, true, 1000, 20, 7), simulate(c, false, 1000, 20, 7));
    eprintln!("random {random:?}, fixed {fixed:?}");
    assert!(fixed.coverage < 0.5, "fixed layouts covered {}", fixed.coverage);
    assert!(random.coverage >= 0.94 && random.half_width > fixed.half_width);
}
