//! Typed errors of the engine.

use thiserror::Error;

use talus_geom::GeomError;

/// Why a world could not be built or changed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    /// A parameter is outside its allowed range.
    #[error("invalid {name} = {value}: {allowed}")]
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// The value given, as text.
        value: String,
        /// What is allowed.
        allowed: &'static str,
    },
    /// A shape, material or grain id that the world does not have.
    #[error("unknown {kind} {id}: the world has {count}")]
    UnknownId {
        /// What kind of id.
        kind: &'static str,
        /// The id given.
        id: u32,
        /// How many of that kind exist.
        count: usize,
    },
    /// The time step exceeds what the force model allows for the grains.
    #[error(
        "time step {dt:e} s is larger than the critical time step {critical:e} s of force model '{model}' for these grains, set by {set_by}; use dt ≤ {critical:e} s (or softer springs)"
    )]
    TimeStepTooLarge {
        /// The time step.
        dt: f64,
        /// The largest safe time step.
        critical: f64,
        /// The force model.
        model: String,
        /// What in the model sets the critical step ([`crate::kind::Limit::describe`]).
        set_by: &'static str,
    },
    /// A checkpoint does not fit the world it is restored into (the world was rebuilt with
    /// other shapes, materials, walls, force model or parameters, already has grains, or
    /// the snapshot is inconsistent or corrupt).
    #[error("snapshot does not fit this world: {what}")]
    SnapshotMismatch {
        /// What does not fit.
        what: String,
    },
    /// A body too large for a periodic axis: more than one of its images could touch a
    /// grain.
    #[error(
        "{body} is {width:e} across (its bounding box with the margin), not less than half the period {period:e} of periodic axis {axis}; use a period more than twice as long, or smaller bodies"
    )]
    TooLargeForPeriod {
        /// The body.
        body: String,
        /// Its width bound.
        width: f64,
        /// The axis.
        axis: char,
        /// The period.
        period: f64,
    },
    /// The geometry of a shape was rejected.
    #[error("shape geometry: {0}")]
    Geometry(#[from] GeomError),
}

/// A check that a floating-point parameter is finite and positive.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, SimError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(SimError::InvalidParameter {
            name,
            value: value.to_string(),
            allowed: "a positive finite number",
        })
    }
}

/// A check that a vector parameter is finite.
pub(crate) fn finite(
    name: &'static str,
    value: talus_geom::glam::DVec3,
) -> Result<talus_geom::glam::DVec3, SimError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(SimError::InvalidParameter {
            name,
            value: format!("{value:?}"),
            allowed: "finite coordinates",
        })
    }
}
