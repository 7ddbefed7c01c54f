//! The narrow phase passes over a pair whose grains cannot have closed the gap its last
//! query found (conservative advancement, `talus_sim::motion`): checked against every pair
//! of grains overlapping at the poses the forces were evaluated at, found afresh.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use common::gas;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3, EulerRot};
use talus_geom::{FeatureCache, closest_features, overlap};
use talus_geom::{Pose, generate};
use talus_sim::BodyRef;
use talus_sim::force::{
    CapillaryBridge, Coefficients, ComposedLaw, ForceModelRegistry, RestitutionDamping,
    VolumetricNormal,
};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall};
use talus_sim::wall::{WallGeometry, WallId};
use talus_sim::{GrainDesc, SimParams, World};

/// Kinds of body in a sortable key.
const GRAIN: u8 = 0;
const WALL: u8 = 1;

/// A body as a sortable key.
fn key(body: BodyRef) -> (u8, u32) {
    match body {
        BodyRef::Grain(g) => (GRAIN, g.0),
        BodyRef::Wall(w) => (WALL, w.0),
    }
}

/// A granular gas of fast, spinning grains (up to 5 m/s and 50 rad/s, grains 5–8 mm
/// across) colliding with each other and with a slab shaking at 60 Hz: at every step, every
/// pair of grains, and every grain and the slab, that overlap at the evaluated poses (with
/// velocity Verlet, the grains' poses after the step; the slab's at the step's end) have a
/// contact, and every such contact is such a pair.
#[test]
fn every_pair_that_overlaps_has_its_force_while_the_others_are_passed_over() {
    let mut world = gas::world(IntegratorKind::Verlet, 64);
    let (grain_pairs, slab_pairs) = met_as_found_afresh(&mut world, 1_500);
    // The gas collides all along, with itself and the slab: the check is not of empty lists.
    assert!(
        grain_pairs > 500 && slab_pairs > 50,
        "{grain_pairs} grain and {slab_pairs} slab contacts"
    );
}

/// Grains at rest in weightlessness, a slab sweeping through them at up to 1.9 m/s: the
/// grains do not move until the slab reaches them, so the pairs with the slab are passed
/// over on the wall's motion alone, and are met in the step it reaches each grain.
#[test]
fn a_moving_wall_meets_grains_at_rest_in_the_step_it_reaches_them() {
    let mut world = World::new(SimParams {
        dt: 1e-5,
        margin: 5e-4,
        gravity: DVec3::ZERO,
        ..SimParams::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let grain = generate::ellipsoid_grain(14, DVec3::new(0.004, 0.003, 0.0025), &mut rng).unwrap();
    let shape = world.add_shape("grain", &grain, None).unwrap();
    let glass = world
        .add_material(Material::new("glass", 2500.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 2e5), ("restitution", 0.6), ("friction", 0.4)]);
    world
        .set_force_model(
            ForceModelRegistry::default()
                .build("volumetric", &c)
                .unwrap(),
        )
        .unwrap();
    let dt = 0.8 * world.critical_time_step_of(shape, glass).unwrap();
    world.set_dt(dt.min(1e-5)).unwrap();
    for i in 0..4 {
        for j in 0..4 {
            let mut d = GrainDesc::at_rest(
                shape,
                glass,
                DVec3::new(0.012 * i as f64, 0.012 * j as f64, 0.0),
            );
            d.orientation =
                DQuat::from_euler(EulerRot::XYZ, rng.random(), rng.random(), rng.random());
            world.add_grain(d).unwrap();
        }
    }
    let slab = generate::rectangular_box(DVec3::new(0.002, 0.06, 0.004)).unwrap();
    world
        .add_wall(
            Wall::new(
                "sweeper",
                WallGeometry::Body(Arc::new(slab)),
                Pose::from_translation(DVec3::new(0.018, 0.018, 0.0)),
                Motion::Oscillate {
                    direction: DVec3::X,
                    amplitude: 0.03,
                    frequency: 10.0,
                    phase: 0.0,
                },
                None,
            )
            .unwrap(),
        )
        .unwrap();
    let (_, slab_pairs) = met_as_found_afresh(&mut world, 3_000);
    assert!(slab_pairs > 20, "{slab_pairs} slab contacts");
}

/// Steps `world` `steps` times; after each step the contacts between grains and between a
/// grain and a wall body are exactly the pairs that overlap at the evaluated poses (with
/// velocity Verlet, the grains' poses after the step; a wall's at the step's end), found by
/// the overlap over all pairs. Returns how many grain–grain and grain–wall overlaps it met.
fn met_as_found_afresh(world: &mut World, steps: usize) -> (usize, usize) {
    let shapes = world.shapes().clone();
    let (mut grain_pairs, mut slab_pairs) = (0usize, 0usize);
    for step in 0..steps {
        world.step();
        let grains: Vec<_> = world.grain_states().collect();
        let mut overlapping = BTreeSet::<((u8, u32), (u8, u32))>::new();
        for (i, a) in grains.iter().enumerate() {
            let pa = shapes.get(a.shape).unwrap();
            for b in &grains[i + 1..] {
                let pb = shapes.get(b.shape).unwrap();
                if overlap(&pa.body, &a.pose, &pb.body, &b.pose, None)
                    .is_some_and(|o| o.volume > 0.0)
                {
                    overlapping.insert((
                        key(BodyRef::Grain(a.id.min(b.id))),
                        key(BodyRef::Grain(a.id.max(b.id))),
                    ));
                }
            }
            for (w, wall) in world.walls().iter().enumerate() {
                let WallGeometry::Body(slab) = &wall.geometry else {
                    continue;
                };
                let pose = wall.state(world.time()).pose;
                if overlap(&pa.body, &a.pose, slab, &pose, None).is_some_and(|o| o.volume > 0.0) {
                    overlapping.insert((
                        key(BodyRef::Grain(a.id)),
                        key(BodyRef::Wall(WallId(w as u32))),
                    ));
                }
            }
        }
        let reported: BTreeSet<_> = world
            .contacts()
            .filter_map(|c| match (c.a, c.b) {
                (BodyRef::Grain(a), BodyRef::Grain(b)) => {
                    Some((key(BodyRef::Grain(a.min(b))), key(BodyRef::Grain(a.max(b)))))
                }
                (BodyRef::Grain(g), BodyRef::Wall(w)) | (BodyRef::Wall(w), BodyRef::Grain(g))
                    if matches!(world.walls()[w.0 as usize].geometry, WallGeometry::Body(_)) =>
                {
                    Some((key(BodyRef::Grain(g)), key(BodyRef::Wall(w))))
                }
                _ => None,
            })
            .collect();
        assert_eq!(reported, overlapping, "step {step}");
        for (_, (kind, _)) in &overlapping {
            if *kind == GRAIN {
                grain_pairs += 1;
            } else {
                slab_pairs += 1;
            }
        }
    }
    (grain_pairs, slab_pairs)
}

/// The granular gas with liquid bridges: a bridge forms when two grains touch and stands
/// until their gap passes its rupture distance, so a pair is met while its gap is within
/// that distance (with a force of zero where no bridge stands). At every step the grain
/// pairs met are exactly those that overlap and those whose gap, found afresh, is within the
/// rupture distance: none is passed over while a bridge could stand.
#[test]
fn a_pair_within_a_bridges_reach_is_met_every_step() {
    let mut world = gas::world(IntegratorKind::Verlet, 64);
    let bridge = CapillaryBridge {
        surface_tension: 0.072,
        contact_angle: 0.3,
        liquid_volume: 1e-10,
    };
    let rupture = bridge.rupture_distance();
    world
        .set_force_model(Box::new(
            ComposedLaw::new(
                "wet",
                vec![
                    Box::new(VolumetricNormal { stiffness: 2e5 }),
                    Box::new(RestitutionDamping { restitution: 0.6 }),
                    Box::new(bridge),
                ],
            )
            .unwrap(),
        ))
        .unwrap();
    let shapes = world.shapes().clone();
    let mut bridges_across_gaps = 0usize;
    for step in 0..1_500 {
        world.step();
        let grains: Vec<_> = world.grain_states().collect();
        let mut expected = BTreeMap::new();
        for (i, a) in grains.iter().enumerate() {
            let pa = shapes.get(a.shape).unwrap();
            for b in &grains[i + 1..] {
                let pb = shapes.get(b.shape).unwrap();
                let overlapping = overlap(&pa.body, &a.pose, &pb.body, &b.pose, None)
                    .is_some_and(|o| o.volume > 0.0);
                let gap = closest_features(
                    &pa.body,
                    &a.pose,
                    &pb.body,
                    &b.pose,
                    &mut FeatureCache::default(),
                )
                .distance();
                if overlapping || gap.is_some_and(|g| g <= rupture) {
                    expected.insert((a.id.min(b.id), a.id.max(b.id)), gap.unwrap_or(0.0));
                }
            }
        }
        let reported: BTreeMap<_, _> = world
            .contacts()
            .filter_map(|c| match (c.a, c.b) {
                (BodyRef::Grain(a), BodyRef::Grain(b)) => {
                    Some(((a.min(b), a.max(b)), c.force_on_b))
                }
                _ => None,
            })
            .collect();
        assert!(
            reported.keys().eq(expected.keys()),
            "step {step}: met {:?}, within reach {:?}",
            reported.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>()
        );
        bridges_across_gaps += reported
            .iter()
            .filter(|(pair, force)| expected[pair] > 0.0 && force.length() > 0.0)
            .count();
    }
    // Bridges stand across gaps along the run: the check is not of touching pairs alone.
    assert!(
        bridges_across_gaps > 100,
        "{bridges_across_gaps} bridges across gaps"
    );
}
