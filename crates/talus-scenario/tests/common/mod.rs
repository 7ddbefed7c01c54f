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

/// `configs/max_stability_angle.ron` shortened: 40 grains dripped onto a plate 5 cm long,
/// its right flank measured over 2.5 cm, at most 10 s.
#[allow(dead_code)]
pub const SHORT_DRIP: [&str; 9] = [
    "grains[0].count=40",
    "walls[0].shape.size=(0.05, 0.016, 0.01)",
    "grains[0].placement.at=(0.0, 0.008, 0.04)",
    "measurements[0].range=(0.0, 0.025)",
    "measurements[0].bins=4",
    "measurements[0].min_grains=8",
    "time.end=10.0",
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
