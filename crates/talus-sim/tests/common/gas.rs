//! A granular gas in a closed box with a shaking slab: the scene of the distributed tests.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3, EulerRot};
use talus_geom::{Pose, generate};
use talus_sim::distribute::ThreadExchange;
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::{Material, MaterialId};
use talus_sim::periodic::{Period, Periodic};
use talus_sim::shape::ShapeId;
use talus_sim::wall::WallGeometry;
use talus_sim::wall::{Motion, Wall};
use talus_sim::{GrainDesc, SimParams, World};

use super::half_space;

const SHAPES: u32 = 3;
/// Edge of the closed box the grains fly in.
const BOX: f64 = 0.05;

/// What precedes the grains: a closed box and a slab shaking inside it, for a granular gas
/// that settles under weak gravity.
pub fn scene(integrator: IntegratorKind) -> World {
    scene_in(integrator, false)
}

/// The scene, or with `periodic` the box periodic along x and y (its side walls and the
/// slab left out): a gas whose grains cross the periodic faces.
pub fn scene_in(integrator: IntegratorKind, periodic: bool) -> World {
    let period = Some(Period {
        lower: 0.0,
        upper: BOX,
    });
    let mut w = World::new(SimParams {
        dt: 1e-5,
        integrator,
        threads: 1,
        margin: 5e-4,
        gravity: DVec3::new(0.0, 0.0, -0.5),
        renumber_every: 50,
        periodic: if periodic {
            Periodic {
                axes: [period, period, None],
            }
        } else {
            Periodic::NONE
        },
        ..SimParams::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for i in 0..SHAPES {
        let g = generate::ellipsoid_grain(
            10 + 4 * i as usize,
            DVec3::new(0.004, 0.003, 0.0025),
            &mut rng,
        )
        .unwrap();
        w.add_shape("grain", &g, None).unwrap();
    }
    let m = w
        .add_material(Material::new("glass", 2500.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 2e5), ("restitution", 0.6), ("friction", 0.4)]);
    w.set_force_model(
        ForceModelRegistry::default()
            .build("volumetric", &c)
            .unwrap(),
    )
    .unwrap();
    let critical = (0..SHAPES)
        .map(|s| w.critical_time_step_of(ShapeId(s), m).unwrap())
        .fold(f64::INFINITY, f64::min);
    w.set_dt(0.8 * critical.min(w.params().dt)).unwrap();
    w.add_wall(half_space("floor", DVec3::ZERO, DVec3::Z))
        .unwrap();
    w.add_wall(half_space("ceiling", DVec3::splat(BOX), -DVec3::Z))
        .unwrap();
    if periodic {
        return w;
    }
    for (name, normal, at) in [
        ("left", DVec3::X, DVec3::ZERO),
        ("right", -DVec3::X, DVec3::splat(BOX)),
        ("front", DVec3::Y, DVec3::ZERO),
        ("back", -DVec3::Y, DVec3::splat(BOX)),
    ] {
        w.add_wall(half_space(name, at, normal)).unwrap();
    }
    let slab = generate::rectangular_box(DVec3::new(0.0015, 0.03, 0.02)).unwrap();
    w.add_wall(
        Wall::new(
            "shaker",
            WallGeometry::Body(Arc::new(slab)),
            Pose::from_translation(DVec3::new(0.2 * BOX, 0.5 * BOX, 0.3 * BOX)),
            Motion::Oscillate {
                direction: DVec3::X,
                amplitude: 0.003,
                frequency: 60.0,
                phase: 0.0,
            },
            None,
        )
        .unwrap(),
    )
    .unwrap();
    w
}

/// The static part and `grains` grains on a lattice flying in random directions.
pub fn world(integrator: IntegratorKind, grains: usize) -> World {
    world_in(integrator, grains, false)
}

/// [`world`] in [`scene_in`].
pub fn world_in(integrator: IntegratorKind, grains: usize, periodic: bool) -> World {
    let mut w = scene_in(integrator, periodic);
    for d in grain_descs(grains) {
        w.add_grain(d).unwrap();
    }
    w
}

/// The grains of [`world`], in the order it adds them.
pub fn grain_descs(grains: usize) -> Vec<GrainDesc> {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let per_side = (grains as f64).cbrt().ceil() as usize;
    let pitch = BOX / per_side as f64;
    let mut descs = Vec::with_capacity(grains);
    for i in 0..grains {
        let cell = DVec3::new(
            (i % per_side) as f64,
            ((i / per_side) % per_side) as f64,
            (i / (per_side * per_side)) as f64,
        );
        let mut d = GrainDesc::at_rest(
            ShapeId(rng.random_range(0..SHAPES)),
            MaterialId(0),
            (cell + 0.5) * pitch,
        );
        d.orientation = DQuat::from_euler(EulerRot::XYZ, rng.random(), rng.random(), rng.random());
        let mut v = || rng.random_range(-1.0..1.0);
        d.velocity = DVec3::new(v(), v(), v()) * 3.0;
        d.angular_velocity = DVec3::new(v(), v(), v()) * 30.0;
        descs.push(d);
    }
    descs
}

pub fn bits(v: DVec3) -> [u64; 3] {
    v.to_array().map(f64::to_bits)
}

/// `run` on `ranks` processes, threads joined by a [`ThreadExchange`] (the protocol MPI
/// carries), each given its member of the group; their results by rank.
pub fn on_processes<T: Send>(ranks: usize, run: impl Fn(ThreadExchange) -> T + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let handles: Vec<_> = ThreadExchange::group(ranks)
            .into_iter()
            .map(|ex| {
                let run = &run;
                s.spawn(move || run(ex))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}
