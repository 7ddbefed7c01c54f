//! Broad-phase methods against each other and against an O(n²) check made here with
//! [`Aabb::intersects`]: randomly moving, growing, shrinking, appearing and disappearing boxes
//! on a coarse grid of coordinates (so that touching and coinciding boxes are common), and
//! the edge cases (empty slice, one box, identical boxes, a box covering all others, slots
//! emptied and refilled, a growing slice, infinite and huge coordinates).
//!
//! Every method must report the pairs of the direct check after every update, report the
//! same events as the brute-force oracle, and its events must turn the previous pair set into
//! the current one.

use std::collections::BTreeSet;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::Aabb;
use talus_geom::glam::DVec3;
use talus_sim::broad::{
    BroadPhase, BroadPhaseKind, BruteForce, PairEvents, ProxyPair, Skinned, SortedDistance,
    SweepAndPrune, UniformGrid,
};

/// Every method under test, with settings that exercise their special paths: many small
/// regions (boxes in several regions, oversized boxes), one region (the thesis' lists),
/// tiny grid cells (oversized boxes), large cells.
fn methods() -> Vec<(&'static str, Box<dyn BroadPhase>)> {
    vec![
        ("sap", Box::new(SweepAndPrune::default())),
        (
            "sap-one-region",
            Box::new(SweepAndPrune::with_region_size(f64::INFINITY)),
        ),
        (
            "sap-region-1",
            Box::new(SweepAndPrune::with_region_size(1.0)),
        ),
        (
            "sap-region-0.3",
            Box::new(SweepAndPrune::with_region_size(0.3)),
        ),
        ("sap-full-resort", Box::new(SweepAndPrune::full_resort())),
        ("grid", Box::new(UniformGrid::new(None))),
        ("grid-0.3", Box::new(UniformGrid::new(Some(0.3)))),
        ("grid-5", Box::new(UniformGrid::new(Some(5.0)))),
        ("sorted", Box::new(SortedDistance::default())),
        (
            "sap-skin",
            Box::new(Skinned::new(Box::new(SweepAndPrune::default()), 0.1)),
        ),
        (
            "sap-skin-0",
            Box::new(Skinned::new(Box::new(SweepAndPrune::default()), 0.0)),
        ),
        (
            "sap-region-1-skin-2",
            Box::new(Skinned::new(
                Box::new(SweepAndPrune::with_region_size(1.0)),
                2.0,
            )),
        ),
        (
            "grid-skin",
            Box::new(Skinned::new(Box::new(UniformGrid::new(None)), 0.25)),
        ),
        (
            "brute-skin",
            Box::new(Skinned::new(Box::new(BruteForce::default()), 0.5)),
        ),
        (
            "kind-default",
            BroadPhaseKind::default().build(talus_sim::periodic::Periodic::NONE),
        ),
    ]
}

/// The overlapping pairs, computed directly.
fn direct_pairs(boxes: &[Option<Aabb>]) -> Vec<ProxyPair> {
    let mut pairs = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            if let (Some(a), Some(b)) = (a, b)
                && a.intersects(b)
            {
                pairs.push(ProxyPair::new(i as u32, j as u32));
            }
        }
    }
    pairs
}

/// A broad phase with the pair set it should have, checked after every update.
struct Checked {
    name: &'static str,
    method: Box<dyn BroadPhase>,
    /// The pair set after the last update, rebuilt from the events alone.
    from_events: BTreeSet<ProxyPair>,
    events: PairEvents,
}

impl Checked {
    fn all() -> Vec<Checked> {
        methods()
            .into_iter()
            .map(|(name, method)| Checked {
                name,
                method,
                from_events: BTreeSet::new(),
                events: PairEvents::default(),
            })
            .collect()
    }
}

fn strictly_sorted(v: &[ProxyPair]) -> bool {
    v.windows(2).all(|w| w[0] < w[1]) && v.iter().all(|p| p.a < p.b)
}

/// Updates the oracle and every method with `boxes`; checks each against the direct pairs,
/// the oracle's events and its own events. `expected` overrides the direct check (for boxes
/// the methods treat as absent).
fn step_all(
    oracle: &mut BruteForce,
    oracle_events: &mut PairEvents,
    methods: &mut [Checked],
    boxes: &[Option<Aabb>],
    expected: Option<Vec<ProxyPair>>,
    context: &str,
) {
    let expected = expected.unwrap_or_else(|| direct_pairs(boxes));
    oracle_events.clear();
    oracle.update(boxes, oracle_events);
    assert_eq!(
        oracle.pairs(),
        expected,
        "brute force vs direct check, {context}"
    );
    for m in methods.iter_mut() {
        m.events.clear();
        m.method.update(boxes, &mut m.events);
        let name = m.name;
        assert!(
            strictly_sorted(&m.events.started),
            "{name}: started not sorted, {context}"
        );
        assert!(
            strictly_sorted(&m.events.ended),
            "{name}: ended not sorted, {context}"
        );
        for p in &m.events.started {
            assert!(
                m.from_events.insert(*p),
                "{name}: started {p:?} already present, {context}"
            );
        }
        for p in &m.events.ended {
            assert!(
                m.from_events.remove(p),
                "{name}: ended {p:?} not present, {context}"
            );
        }
        let pairs = m.method.pairs();
        assert_eq!(pairs, expected, "{name}: pairs vs direct check, {context}");
        assert_eq!(
            m.method.pair_count(),
            expected.len(),
            "{name}: pair_count, {context}"
        );
        assert!(
            m.from_events.iter().eq(expected.iter()),
            "{name}: events do not reproduce the pair set, {context}"
        );
        assert_eq!(
            &m.events, &*oracle_events,
            "{name}: events vs brute force, {context}"
        );
    }
}

/// Runs a sequence of box slices through every method.
fn run_sequence(steps: &[Vec<Option<Aabb>>]) {
    let mut oracle = BruteForce::default();
    let mut oracle_events = PairEvents::default();
    let mut methods = Checked::all();
    for (t, boxes) in steps.iter().enumerate() {
        step_all(
            &mut oracle,
            &mut oracle_events,
            &mut methods,
            boxes,
            None,
            &format!("step {t}"),
        );
    }
}

/// A box from grid coordinates (multiples of `q`).
fn grid_box(q: f64, min: [i32; 3], ext: [i32; 3]) -> Aabb {
    let min = DVec3::new(f64::from(min[0]), f64::from(min[1]), f64::from(min[2])) * q;
    let ext = DVec3::new(f64::from(ext[0]), f64::from(ext[1]), f64::from(ext[2])) * q;
    Aabb {
        min,
        max: min + ext,
    }
}

/// Renames the proxies of the oracle and every method by a random permutation, moving the
/// boxes of `state` with them, as a world renumbering its grains does.
fn renumber_all<T>(
    rng: &mut ChaCha8Rng,
    state: &mut Vec<T>,
    oracle: &mut BruteForce,
    methods: &mut [Checked],
) {
    let n = state.len();
    let mut new_of: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        new_of.swap(i, rng.random_range(0..=i));
    }
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for (old, value) in state.drain(..).enumerate() {
        slots[new_of[old] as usize] = Some(value);
    }
    state.extend(slots.into_iter().flatten());
    oracle.renumber(&new_of);
    for m in methods.iter_mut() {
        m.method.renumber(&new_of);
        m.from_events = m.from_events.iter().map(|p| p.renamed(&new_of)).collect();
    }
}

/// A random walk of `slots` boxes (growing to `max_slots`) on a 0.25 grid in a cube of edge
/// `cells · 0.25`: each step every box may move, grow or shrink by a grid unit, vanish or
/// reappear, copy another box, or jump far; now and then many boxes jump at once. With
/// `renumber_every` > 0, the proxies are renamed at random that often.
fn random_scene(
    seed: u64,
    steps: usize,
    (slots, max_slots): (usize, usize),
    cells: i32,
    renumber_every: usize,
) -> usize {
    const Q: f64 = 0.25;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let random_box = |rng: &mut ChaCha8Rng| {
        let ext = [0, 1, 2].map(|_| rng.random_range(0..=6));
        let min = [0, 1, 2].map(|_| rng.random_range(-2..cells));
        (min, ext)
    };
    let mut state: Vec<Option<([i32; 3], [i32; 3])>> = (0..slots)
        .map(|_| rng.random_bool(0.8).then(|| random_box(&mut rng)))
        .collect();
    let mut oracle = BruteForce::default();
    let mut oracle_events = PairEvents::default();
    let mut methods = Checked::all();
    let mut pairs_seen = 0;
    for t in 0..steps {
        let mass_jump = rng.random_bool(0.02);
        for i in 0..state.len() {
            let r: f64 = rng.random();
            match &mut state[i] {
                None => {
                    if r < 0.05 {
                        state[i] = Some(random_box(&mut rng));
                    }
                }
                Some((min, ext)) => {
                    if r < 0.03 {
                        state[i] = None;
                    } else if r < 0.04 || mass_jump && r < 0.5 {
                        *min = [0, 1, 2].map(|_| rng.random_range(-2..cells));
                    } else if r < 0.05 {
                        let j = rng.random_range(0..state.len());
                        state[i] = state[j].or(state[i]);
                    } else if r < 0.7 {
                        let a = rng.random_range(0..3);
                        if rng.random_bool(0.5) {
                            min[a] += rng.random_range(-1..=1);
                        } else {
                            ext[a] = (ext[a] + rng.random_range(-1..=1)).clamp(0, 12);
                        }
                    }
                }
            }
        }
        if state.len() < max_slots && rng.random_bool(0.05) {
            let more = rng.random_range(1..=4);
            for _ in 0..more {
                state.push(rng.random_bool(0.7).then(|| random_box(&mut rng)));
            }
        }
        let boxes: Vec<Option<Aabb>> = state
            .iter()
            .map(|s| s.map(|(min, ext)| grid_box(Q, min, ext)))
            .collect();
        step_all(
            &mut oracle,
            &mut oracle_events,
            &mut methods,
            &boxes,
            None,
            &format!("seed {seed}, step {t}"),
        );
        pairs_seen += oracle.pair_count();
        if renumber_every > 0 && t % renumber_every == renumber_every - 1 {
            renumber_all(&mut rng, &mut state, &mut oracle, &mut methods);
        }
    }
    pairs_seen
}

#[test]
fn random_walks_small_dense() {
    // 40 → 60 boxes of up to 1.5 in a cube of edge 3: many overlaps, touches and copies.
    for seed in 0..4 {
        let pairs = random_scene(seed, 3000, (40, 60), 12, 0);
        assert!(pairs > 3000 * 30, "the scene should be crowded: {pairs}");
    }
}

#[test]
fn random_walks_large_sparse() {
    // 300 → 400 boxes in a cube of edge 10: several automatic regions, mass jumps that make
    // regions rebuild, boxes entering and leaving regions every step.
    for seed in 10..13 {
        let pairs = random_scene(seed, 1000, (300, 400), 40, 0);
        assert!(pairs > 1000 * 80, "the scene should have pairs: {pairs}");
    }
}

#[test]
fn proxies_renamed_between_updates() {
    // The walks above with the proxies renamed by a random permutation every few updates:
    // every method keeps its pairs and reports the events of the renamed boxes.
    for seed in 20..23 {
        let pairs = random_scene(seed, 1000, (40, 60), 12, 7);
        assert!(pairs > 1000 * 30, "the scene should be crowded: {pairs}");
    }
    for seed in 30..32 {
        let pairs = random_scene(seed, 400, (300, 400), 40, 5);
        assert!(pairs > 400 * 80, "the scene should have pairs: {pairs}");
    }
}

#[test]
fn jiggling_lattice_across_region_boundaries() {
    // Unit boxes on a lattice of spacing 0.98 (so neighbours overlap by 0.02), each update
    // offset by up to ±0.015 at random: overlaps flicker, and ends sit on the boundaries of
    // regions of edge 1 and on those of the automatic regions.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut steps = Vec::new();
    for _ in 0..300 {
        let mut boxes = Vec::new();
        for x in 0..6 {
            for y in 0..6 {
                for z in 0..4 {
                    let site = DVec3::new(f64::from(x), f64::from(y), f64::from(z)) * 0.98;
                    let jiggle =
                        DVec3::from_array([0, 1, 2].map(|_| rng.random_range(-0.015..0.015)));
                    let min = site + jiggle;
                    boxes.push(Some(Aabb {
                        min,
                        max: min + DVec3::ONE,
                    }));
                }
            }
        }
        steps.push(boxes);
    }
    run_sequence(&steps);
}

#[test]
fn empty_slice() {
    run_sequence(&[vec![], vec![], vec![None, None], vec![]]);
}

#[test]
fn one_box() {
    let b = Some(grid_box(1.0, [0, 0, 0], [1, 1, 1]));
    run_sequence(&[vec![b], vec![b], vec![None], vec![b], vec![]]);
}

#[test]
fn all_boxes_identical() {
    let b = Some(grid_box(0.5, [1, 2, 3], [2, 2, 2]));
    let point = Some(grid_box(0.5, [1, 2, 3], [0, 0, 0]));
    let all = vec![b; 50];
    let points = vec![point; 50];
    run_sequence(&[all.clone(), all.clone(), points.clone(), all, points]);
    let mut bf = BruteForce::default();
    let mut ev = PairEvents::default();
    bf.update(&vec![b; 50], &mut ev);
    assert_eq!(bf.pair_count(), 50 * 49 / 2);
}

#[test]
fn box_growing_to_cover_all() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut boxes: Vec<Option<Aabb>> = (0..200)
        .map(|_| {
            let min = [0, 1, 2].map(|_| rng.random_range(0..40));
            Some(grid_box(0.25, min, [2, 2, 2]))
        })
        .collect();
    let mut steps = Vec::new();
    // Box 0 grows step by step (through the oversized sizes of every method) to cover all,
    // far beyond, then to infinity, then shrinks back.
    let sizes: Vec<f64> = (0..12)
        .map(|i| 0.5 * 2f64.powi(i))
        .chain([1e12, 1e300, f64::INFINITY, 3.0, 0.5])
        .collect();
    for s in sizes {
        boxes[0] = Some(Aabb {
            min: DVec3::splat(5.0 - s),
            max: DVec3::splat(5.0 + s),
        });
        steps.push(boxes.clone());
    }
    run_sequence(&steps);
}

#[test]
fn slots_emptied_and_refilled_and_slice_growing() {
    let b = |x: i32| Some(grid_box(0.5, [x, 0, 0], [2, 2, 2]));
    run_sequence(&[
        vec![b(0), b(1), b(2)],
        vec![b(0), None, b(2)],
        vec![None, None, None],
        vec![b(0), b(1), b(2), b(3)],
        vec![b(0), b(1), b(2), b(3), None, None, b(4)],
        vec![None, b(1), None, b(3), b(2), b(0), b(4), b(9), b(10)],
        vec![b(9), b(1), b(8), b(3), b(2), b(0), b(4), b(9), b(10), b(1)],
    ]);
}

#[test]
fn slice_growing_by_thousands() {
    // A slice that grows from 10 to 3000 slots at once: the regions build by full sort.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut boxes: Vec<Option<Aabb>> = Vec::new();
    let mut steps = Vec::new();
    for n in [10, 3000, 3000, 3100] {
        while boxes.len() < n {
            let min = [0, 1, 2].map(|_| rng.random_range(0..120));
            boxes.push(Some(grid_box(0.25, min, [4, 4, 4])));
        }
        // Jiggle a few.
        for _ in 0..50 {
            let i = rng.random_range(0..boxes.len());
            if let Some(b) = &mut boxes[i] {
                b.min.x += 0.25;
                b.max.x += 0.25;
            }
        }
        steps.push(boxes.clone());
    }
    run_sequence(&steps);
}

#[test]
fn touching_at_faces_edges_corners_and_signed_zero() {
    let unit = |x: f64, y: f64, z: f64| {
        Some(Aabb {
            min: DVec3::new(x, y, z),
            max: DVec3::new(x + 1.0, y + 1.0, z + 1.0),
        })
    };
    // Face, edge and corner contact with the box at the origin, one just apart.
    let boxes = vec![
        unit(0.0, 0.0, 0.0),
        unit(1.0, 0.0, 0.0),
        unit(1.0, 1.0, 0.0),
        unit(1.0, 1.0, 1.0),
        unit(-1.0, -1.0, -1.0),
        unit(-1.0 - 1e-15, 0.0, 0.0),
        // -0.0 touching +0.0.
        Some(Aabb {
            min: DVec3::new(-1.0, 5.0, 5.0),
            max: DVec3::new(-0.0, 6.0, 6.0),
        }),
        Some(Aabb {
            min: DVec3::new(0.0, 5.0, 5.0),
            max: DVec3::new(1.0, 6.0, 6.0),
        }),
    ];
    let pairs = direct_pairs(&boxes);
    assert!(pairs.contains(&ProxyPair::new(0, 3)) && pairs.contains(&ProxyPair::new(0, 4)));
    assert!(pairs.contains(&ProxyPair::new(6, 7)));
    assert!(!pairs.contains(&ProxyPair::new(0, 5)));
    run_sequence(&[boxes.clone(), boxes.into_iter().rev().collect()]);
}

#[test]
fn huge_and_infinite_coordinates() {
    let b = |min: [f64; 3], max: [f64; 3]| {
        Some(Aabb {
            min: DVec3::from_array(min),
            max: DVec3::from_array(max),
        })
    };
    let big = f64::MAX;
    let inf = f64::INFINITY;
    let steps = vec![
        vec![
            b([1e300, 0.0, 0.0], [2e300, 1.0, 1.0]),
            b([1.5e300, 0.5, 0.5], [1.6e300, 2.0, 2.0]),
            b([-big, -big, -big], [big, big, big]),
            b([-inf, -inf, -inf], [inf, inf, inf]),
            b([0.0, 0.0, 0.0], [inf, 1.0, 1.0]),
            b([-inf, 0.5, 0.5], [-1e308, 1.0, 1.0]),
            b([1e-300, 1e-300, 1e-300], [2e-300, 2e-300, 2e-300]),
            b([1.5e-300, 1.5e-300, 1.5e-300], [3e-300, 3e-300, 3e-300]),
            b([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
            b([inf, inf, inf], [inf, inf, inf]),
            b([-inf, -inf, -inf], [-inf, -inf, -inf]),
        ],
        vec![
            b([1e300, 0.0, 0.0], [2e300, 1.0, 1.0]),
            b([2.5e300, 0.5, 0.5], [2.6e300, 2.0, 2.0]),
            None,
            b([-inf, -inf, -inf], [inf, inf, inf]),
            b([0.0, 0.0, 0.0], [inf, 1.0, 1.0]),
            b([-inf, 0.5, 0.5], [-1e308, 1.0, 1.0]),
            b([1e-300, 1e-300, 1e-300], [2e-300, 2e-300, 2e-300]),
            b([2.5e-300, 2.5e-300, 2.5e-300], [3e-300, 3e-300, 3e-300]),
            b([-0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
            b([inf, inf, inf], [inf, inf, inf]),
            None,
        ],
    ];
    run_sequence(&steps);
}

#[test]
fn nan_and_inverted_boxes_are_absent() {
    let b = |min: [f64; 3], max: [f64; 3]| {
        Some(Aabb {
            min: DVec3::from_array(min),
            max: DVec3::from_array(max),
        })
    };
    let steps = [
        vec![
            b([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
            b([f64::NAN, 0.0, 0.0], [1.0, 1.0, 1.0]),
            b([0.5, 0.5, 0.5], [0.2, 2.0, 2.0]),
            b([0.5, 0.5, 0.5], [2.0, 2.0, 2.0]),
        ],
        vec![
            b([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
            b([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
            b([0.5, 0.5, 0.5], [2.0, 2.0, f64::NAN]),
            b([0.5, 0.5, 0.5], [2.0, 2.0, 2.0]),
        ],
    ];
    let mut oracle = BruteForce::default();
    let mut oracle_events = PairEvents::default();
    let mut methods = Checked::all();
    for (t, boxes) in steps.iter().enumerate() {
        // The direct check on the boxes that are neither NaN nor inverted.
        let valid: Vec<Option<Aabb>> = boxes
            .iter()
            .map(|b| b.filter(|b| b.min.cmple(b.max).all()))
            .collect();
        let expected = direct_pairs(&valid);
        step_all(
            &mut oracle,
            &mut oracle_events,
            &mut methods,
            boxes,
            Some(expected),
            &format!("step {t}"),
        );
    }
}

#[test]
fn slice_shrinking_ends_the_pairs_of_cut_slots() {
    let b = |x: i32| Some(grid_box(0.5, [x, 0, 0], [2, 2, 2]));
    run_sequence(&[
        vec![b(0), b(1), b(2), b(3)],
        vec![b(0), b(1)],
        vec![],
        vec![b(0), b(1), b(2)],
    ]);
}

/// A proptest step: per slot, `None` or a box on the 0.25 grid.
fn slot_strategy() -> impl Strategy<Value = Option<([i32; 3], [i32; 3])>> {
    prop::option::weighted(
        0.85,
        (
            prop::array::uniform3(-4i32..12),
            prop::array::uniform3(0i32..6),
        ),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Sequences of unrelated slices (every box may jump anywhere between updates), the
    /// slice growing along the sequence.
    #[test]
    fn arbitrary_sequences(steps in prop::collection::vec(
        prop::collection::vec(slot_strategy(), 0..30), 1..12)) {
        let mut slices = Vec::new();
        let mut len = 0;
        for step in &steps {
            len = len.max(step.len());
            let mut boxes: Vec<Option<Aabb>> =
                step.iter().map(|s| s.map(|(min, ext)| grid_box(0.25, min, ext))).collect();
            boxes.resize(len, None);
            slices.push(boxes);
        }
        run_sequence(&slices);
    }
}
