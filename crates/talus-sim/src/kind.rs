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

/// The smallest critical time step of `extremes` under `laws` (infinite without one), and
/// the law that sets it.
///
/// A contact's area is bounded by the cross-section of its smaller grain and its
/// characteristic length is at least that grain's equivalent radius, so each kind is taken
/// with its own largest area; combining the lightest grain with the largest area of another
/// kind would penalise every mixture of sizes (an intruder among small beads) for contacts
/// that cannot occur.
pub(crate) fn critical<'a>(
    laws: impl IntoIterator<Item = &'a dyn ForceModel>,
    extremes: &[(f64, f64, f64)],
) -> (f64, Option<&'a dyn ForceModel>) {
    let mut smallest = (f64::INFINITY, None);
    for law in laws {
        for &(mass, radius, length) in extremes {
            let dt = critical_time_step(law, mass, std::f64::consts::PI * radius * radius, length);
            if dt < smallest.0 || smallest.1.is_none() {
                smallest = (dt.min(smallest.0), Some(law));
            }
        }
    }
    smallest
}
