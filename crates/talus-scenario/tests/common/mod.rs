//! What the scenario tests share.

/// `configs/angle_of_repose.ron` shortened: 192 grains in half the channel, the gate
/// removed at 0.2 s, at most 0.9 s, the pile measured over 0.2 m.
#[allow(dead_code)]
pub const SHORT_PILE: [&str; 8] = [
    "grains[0].count=192",
    "grains[0].placement.max=(0.05, 0.04, 0.3)",
    "walls[4].shape.center=(0.055, 0.02, 0.15)",
    "walls[4].removed_at=0.2",
    "time.end=0.9",
    "time.stop_at_rest.after=0.6",
    "measurements[0].range=(0.0, 0.2)",
    "measurements[0].bins=20",
];

/// `configs/max_stability_angle.ron` shortened: 30 grains, a fall of 1° an avalanche, the
/// heaps of 12 grains and more measured, at most 11 s. Seed 12: a heap this small fits on
/// both flanks often enough to show avalanches on each with some seeds only (with seed 11
/// its near flank slides once).
#[allow(dead_code)]
pub const SHORT_DRIP: [&str; 7] = [
    "seed=12",
    "grains[0].count=30",
    "measurements[0].avalanche_drop_deg=1.0",
    "measurements[0].min_grains=12",
    "time.end=11.0",
    "outputs.frame_interval=None",
    "outputs.plots=false",
];

/// `configs/vibrating_conveyor.ron` shortened: 16 grains, 0.6 s, measured from 0.2 s.
#[allow(dead_code)]
pub const SHORT_CONVEYOR: [&str; 6] = [
    "grains[0].count=16",
    "time.end=0.6",
    "measurements[0].window=(0.2, 0.6)",
    "time.checkpoint_interval=None",
    "outputs.frame_interval=None",
    "outputs.plots=false",
];

/// `configs/chute_flow.ron` shortened: 150 grains on a base 5 × 4 cm at 36°, a softer law
/// and a longer step, 0.8 s measured from 0.5 s.
#[allow(dead_code)]
pub const SHORT_CHUTE: [&str; 13] = [
    "grains[0].count=150",
    "periodic.x=(0.0, 0.05)",
    "periodic.y=(0.0, 0.04)",
    "walls[0].shape.max=(0.05, 0.04, 0.0)",
    "grains[0].placement.max=(0.047, 0.037, 0.4)",
    "incline_deg=36",
    "force_model.coefficients.stiffness=2e5",
    "time.dt=5e-5",
    "time.end=0.8",
    "time.checkpoint_interval=0.4",
    "measurements[0].window=(0.5, 0.8)",
    "outputs.frame_interval=0.4",
    "outputs.plots=false",
];
