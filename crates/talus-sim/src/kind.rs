//! The kinds of grain: what the critical time step of a grain rests on — its mass, its
//! largest radius and its equivalent-sphere radius — computed once per kind of grain
//! (shape and material), never per step.

use crate::force::{ForceModel, critical_time_step};
use crate::shape::Shape;

/// What the critical time step of a kind of grain depends on: its mass, its largest radius
/// and its equivalent-sphere radius.
pub(crate) fn grain_kind(shape: &Shape, density: f64) -> (f64, f64, f64) {
    (
        density * shape.volume,
        shape.radius,
        shape.equivalent_radius,
    )
}

/// The smallest critical time step of `extremes` under `model` (infinite without one).
pub(crate) fn critical(model: Option<&dyn ForceModel>, extremes: &[(f64, f64, f64)]) -> f64 {
    let Some(model) = model else {
        return f64::INFINITY;
    };
    extremes
        .iter()
        .map(|&(mass, radius, length)| {
            critical_time_step(model, mass, std::f64::consts::PI * radius * radius, length)
        })
        .fold(f64::INFINITY, f64::min)
}
