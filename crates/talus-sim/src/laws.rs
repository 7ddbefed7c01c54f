//! The contact laws of a world, per pair of materials: one law for every pair unless a pair
//! of materials has its own (quartz on steel, glass on plastic). A wall without a material
//! meets each grain with the law of the grain's material with itself.

use crate::force::ForceModel;
use crate::material::MaterialId;

/// The material of a body that has none (a wall left without one).
pub(crate) const NO_MATERIAL: u16 = u16::MAX;

/// The laws, and for every pair of materials which one holds.
#[derive(Default)]
pub(crate) struct ContactLaws {
    /// The law of every pair that has none of its own.
    pub default: Option<Box<dyn ForceModel>>,
    /// The laws of particular pairs, `a ≤ b`, in the order they were set.
    pub pairs: Vec<((MaterialId, MaterialId), Box<dyn ForceModel>)>,
    /// For materials `a`, `b` < `materials`: 0 for the default law, `k + 1` for `pairs[k]`,
    /// at `a · materials + b`.
    table: Vec<u32>,
    materials: usize,
}

impl ContactLaws {
    /// The law between bodies of materials `a` and `b` ([`NO_MATERIAL`] for a wall without
    /// one: the other's material with itself).
    #[inline]
    pub fn law(&self, a: u16, b: u16) -> Option<&dyn ForceModel> {
        let (a, b) = match (a, b) {
            (NO_MATERIAL, m) | (m, NO_MATERIAL) => (m, m),
            pair => pair,
        };
        let (a, b) = (usize::from(a), usize::from(b));
        let slot = if a < self.materials && b < self.materials {
            self.table[a * self.materials + b]
        } else {
            0
        };
        match slot {
            0 => self.default.as_deref(),
            k => Some(self.pairs[k as usize - 1].1.as_ref()),
        }
    }

    /// Sets the law of the pair `a`, `b` (either order), replacing one set before.
    pub fn set_pair(&mut self, a: MaterialId, b: MaterialId, law: Box<dyn ForceModel>) {
        let key = (a.min(b), a.max(b));
        match self.pairs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, old)) => *old = law,
            None => self.pairs.push((key, law)),
        }
        self.index(self.materials);
    }

    /// Rebuilds the table for `materials` materials.
    pub fn index(&mut self, materials: usize) {
        self.materials = materials;
        self.table.clear();
        self.table.resize(materials * materials, 0);
        for (k, ((a, b), _)) in self.pairs.iter().enumerate() {
            let (a, b) = (usize::from(a.0), usize::from(b.0));
            if a < materials && b < materials {
                self.table[a * materials + b] = k as u32 + 1;
                self.table[b * materials + a] = k as u32 + 1;
            }
        }
    }

    /// The largest range of the laws ([`ForceModel::range`]).
    pub fn range(&self) -> f64 {
        self.all().map(ForceModel::range).fold(0.0, f64::max)
    }

    /// Every law: the default first, then the pairs'.
    pub fn all(&self) -> impl Iterator<Item = &dyn ForceModel> {
        self.default
            .as_deref()
            .into_iter()
            .chain(self.pairs.iter().map(|(_, law)| law.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::force::{Coefficients, ForceModelRegistry};

    fn law(friction: f64) -> Box<dyn ForceModel> {
        let c = Coefficients::from([("stiffness", 1e6), ("friction", friction)]);
        ForceModelRegistry::default()
            .build("volumetric", &c)
            .unwrap()
    }

    #[test]
    fn a_pair_has_its_own_law_or_the_default_and_a_bare_wall_takes_the_grains() {
        let mut laws = ContactLaws {
            default: Some(law(0.5)),
            ..ContactLaws::default()
        };
        laws.index(3);
        let (m1, m2) = (MaterialId(1), MaterialId(2));
        laws.set_pair(m2, m1, law(0.1));
        laws.set_pair(m1, m1, law(0.9));
        // Which law: its address.
        let at = |x: Option<&dyn ForceModel>| x.map(|l| (l as *const dyn ForceModel).cast::<()>());
        let default = at(laws.default.as_deref());
        let (pair, own) = (
            at(Some(laws.pairs[0].1.as_ref())),
            at(Some(laws.pairs[1].1.as_ref())),
        );
        assert_eq!([at(laws.law(1, 2)), at(laws.law(2, 1))], [pair, pair]);
        assert_eq!([at(laws.law(1, 1)), at(laws.law(0, 2))], [own, default]);
        // A wall without a material: the grain's own pair.
        assert_eq!(at(laws.law(NO_MATERIAL, 1)), own);
        assert_eq!(at(laws.law(0, NO_MATERIAL)), default);
        // Replacing a pair's law keeps one law per pair; a new material meets the default.
        laws.set_pair(m1, m2, law(0.2));
        assert_eq!(laws.pairs.len(), 2);
        laws.index(4);
        let pair = at(Some(laws.pairs[0].1.as_ref()));
        assert_eq!([at(laws.law(3, 1)), at(laws.law(2, 1))], [default, pair]);
        assert_eq!(laws.all().count(), 3);
    }
}
