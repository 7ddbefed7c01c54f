//! The census of an output time put together from parts: every shipped scenario's quick
//! variant run two thousand steps, its grains dealt at random to up to five "processes",
//! each part counted and measured on its own and the parts merged in a random order (both
//! passes of the vibrated bed's temperature), against the census of all grains at once. Each
//! probe's values and the stock must be the same to the bit: what a decomposed run reports
//! does not depend on how its grains are split.

mod common;

use common::{QUICK_VARIANTS, scenario, scratch, start};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_scenario::probe::{Census, Probe, Sample, kinetic_energy};

/// Steps run before the census: grains placed, moving, some in contact.
const STEPS: u64 = 2000;

/// The census of the grains of `parts`, each counted alone, merged in `order`, then the
/// second passes over all parts (as `Census::taken` does across processes).
fn census_of_parts(parts: &[Sample], probes: &[&Probe], order: &[usize]) -> Census {
    let mut total = Census::of(&parts[order[0]], probes.iter().copied());
    for &k in &order[1..] {
        total.merge(&Census::of(&parts[k], probes.iter().copied()));
    }
    // Every part's second pass from the first's totals, then merged.
    let seconds: Vec<Vec<_>> = order
        .iter()
        .map(|&k| {
            probes
                .iter()
                .zip(&total.partials)
                .map(|(p, first)| p.second_partial(&parts[k], first))
                .collect()
        })
        .collect();
    for second in seconds {
        for (partial, rest) in total.partials.iter_mut().zip(second) {
            if let Some(rest) = rest {
                partial.merge(&rest);
            }
        }
    }
    total
}

/// Each probe's values taken from `census` (by a copy of the probe), as bits.
fn values(probes: &[&Probe], census: &Census, time: f64) -> Vec<Vec<u64>> {
    probes
        .iter()
        .zip(&census.partials)
        .map(|(p, total)| {
            let mut probe = (*p).clone();
            probe
                .take(time, total)
                .iter()
                .map(|v| v.to_bits())
                .collect()
        })
        .collect()
}

#[test]
fn the_parts_merged_give_the_census_of_all_grains_to_the_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (name, overrides) in QUICK_VARIANTS {
        // The chute's profile is measured from the start, so that its window is in the
        // census too.
        let more: &[&str] = if name == "chute_flow" {
            &["measurements[0].window=(0.0, 0.8)"]
        } else {
            &[]
        };
        let (file, quick) = scenario(name, overrides, more);
        let out = scratch(&format!("census-{name}"));
        let mut runner = start(&quick, &file, 1, &out);
        runner
            .run(Some(STEPS), &mut |_| {})
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let whole = runner.sample();
        assert!(!whole.grains.is_empty(), "{name}: grains");
        let probes: Vec<&Probe> = runner.state.probes.iter().collect();
        let all = census_of_parts(std::slice::from_ref(&whole), &probes, &[0]);
        let expected = values(&probes, &all, whole.time);
        // The plain sum in id order agrees to round-off: the census sums what it should.
        let plain: f64 = whole.grains.iter().map(|g| kinetic_energy(&g.state)).sum();
        let exact = all.kinetic_energy.value();
        assert!(
            (exact - plain).abs() <= 1e-12 * plain.abs(),
            "{name}: {exact} against {plain}"
        );
        assert_eq!(all.grains as usize, whole.grains.len());
        for trial in 0..4 {
            let count = rng.random_range(2..=5);
            let mut parts: Vec<Sample> = (0..count)
                .map(|_| Sample {
                    time: whole.time,
                    up: whole.up,
                    grains: Vec::new(),
                })
                .collect();
            // Dealt in id order, so that each part is in id order as a process's is; one
            // part may get none.
            for g in &whole.grains {
                parts[rng.random_range(0..count)].grains.push(*g);
            }
            let mut order: Vec<usize> = (0..count).collect();
            for i in (1..count).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            let merged = census_of_parts(&parts, &probes, &order);
            assert_eq!(merged.grains, all.grains, "{name}, trial {trial}");
            assert_eq!(
                merged.kinetic_energy.value().to_bits(),
                all.kinetic_energy.value().to_bits(),
                "{name}, trial {trial}: kinetic energy"
            );
            assert_eq!(
                values(&probes, &merged, whole.time),
                expected,
                "{name}, trial {trial}: the probes' values"
            );
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}
