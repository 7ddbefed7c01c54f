//! What the scenario tests share.

/// `configs/angle_of_repose.ron` shortened: 192 grains in half the channel, the gate
/// removed at 0.2 s, at most 0.9 s, the pile measured over 0.2 m.
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
