//! Grain materials.

use crate::error::{SimError, positive};

/// Index of a material in the world.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct MaterialId(pub u16);

/// A grain material.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// A name for output.
    pub name: String,
    /// Mass per volume.
    pub density: f64,
}

impl Material {
    /// A material of the given density.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless the density is positive and finite.
    pub fn new(name: &str, density: f64) -> Result<Material, SimError> {
        Ok(Material {
            name: name.to_string(),
            density: positive("density", density)?,
        })
    }
}
