//! The narrow phase passes over a pair whose grains cannot have closed the gap its last
//! query found (conservative advancement, `talus_sim::motion`): checked against every pair
//! of grains overlapping at the poses the forces were evaluated at, found afresh.

mod common;

use std::collections::BTreeSet;

use common::gas;
use talus_geom::overlap;
use talus_sim::BodyRef;
use talus_sim::integrate::IntegratorKind;

/// A granular gas of fast, spinning grains (up to 5 m/s and 50 rad/s, grains 5–8 mm
/// across) colliding with each other and with a shaking slab: at every step, every pair of
/// grains that overlaps at the evaluated poses (with velocity Verlet, the poses after the
/// step) has a contact, and every grain–grain contact is such a pair.
#[test]
fn every_pair_that_overlaps_has_its_force_while_the_others_are_passed_over() {
    let mut world = gas::world(IntegratorKind::Verlet, 64);
    let shapes = world.shapes().clone();
    let mut met = 0usize;
    for step in 0..1_500 {
        world.step();
        let grains: Vec<_> = world.grain_states().collect();
        let mut overlapping = BTreeSet::new();
        for (i, a) in grains.iter().enumerate() {
            for b in &grains[i + 1..] {
                let (pa, pb) = (shapes.get(a.shape).unwrap(), shapes.get(b.shape).unwrap());
                if overlap(&pa.body, &a.pose, &pb.body, &b.pose, None)
                    .is_some_and(|o| o.volume > 0.0)
                {
                    overlapping.insert((a.id.min(b.id), a.id.max(b.id)));
                }
            }
        }
        let reported: BTreeSet<_> = world
            .contacts()
            .filter_map(|c| match (c.a, c.b) {
                (BodyRef::Grain(a), BodyRef::Grain(b)) => Some((a.min(b), a.max(b))),
                _ => None,
            })
            .collect();
        assert_eq!(reported, overlapping, "step {step}");
        met += overlapping.len();
    }
    // The gas collides all along: the check is not of an empty list.
    assert!(met > 500, "{met} grain contacts over the run");
}
