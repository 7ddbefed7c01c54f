//! The `volumetric_yade` model: Yade's `Law2_PolyhedraGeom_PolyhedraPhys_Volumetric`.
//!
//! * Normal: `F_n = k_n V` along the contact normal (k_n in N/m³; Yade derives it from the
//!   two materials' "young" values in series, `k_n = Y_a Y_b / (Y_a + Y_b)`).
//! * Shear: incremental, `F_s ← rotate(F_s) − k_s Δu_s` with Δu_s the tangential relative
//!   displacement of the step; the previous shear force is first turned into the new
//!   tangent plane. Capped at `tan φ |F_n|`.
//! * No contact damping: Yade relies on global (numerical) damping instead.
//!
//! The shear force is the history (3 values). Forces act at the overlap's centroid.

use talus_geom::glam::DVec3;

use super::{ContactInput, ContactLoad, ForceModel};

/// The `volumetric_yade` model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VolumetricYade {
    /// k_n, N/m³.
    pub normal_stiffness: f64,
    /// k_s, N/m³ (per unit overlap volume, as k_n; Yade: young · poisson in series).
    pub shear_stiffness: f64,
    /// tan φ.
    pub friction: f64,
}

impl ForceModel for VolumetricYade {
    fn name(&self) -> &str {
        "volumetric_yade"
    }

    fn history_len(&self) -> usize {
        3
    }

    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        let o = &contact.overlap;
        let normal = self.normal_stiffness * o.volume;
        let mut shear = DVec3::new(history[0], history[1], history[2]);
        if contact.new_contact {
            shear = DVec3::ZERO;
        }
        // Turn the old shear force into the new tangent plane, keeping its length.
        let length = shear.length();
        shear = (shear - o.normal * shear.dot(o.normal))
            .try_normalize()
            .map_or(DVec3::ZERO, |d| d * length);
        shear -= self.shear_stiffness * contact.tangential_velocity() * contact.dt;
        let limit = self.friction * normal;
        if shear.length() > limit {
            shear *= if shear.length() > 0.0 {
                limit / shear.length()
            } else {
                0.0
            };
        }
        history[..3].copy_from_slice(&shear.to_array());
        ContactLoad::from_force(o.normal * normal + shear)
    }

    fn normal_stiffness(&self, area: f64, _length: f64) -> f64 {
        // dF/dδ = k_n dV/dδ = k_n A.
        self.normal_stiffness * area
    }
}
