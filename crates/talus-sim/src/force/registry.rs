//! Force models by name, with their named coefficients.

use std::collections::BTreeMap;

use thiserror::Error;

use super::ForceModel;
use super::damping::RESTITUTION;
use super::friction::{FRICTION, TANGENTIAL_RATIO};
use super::part::{ComposedLaw, Part, PartEntry, Role};
use super::{cohesion, damping, energy, friction, rolling, twisting, volumetric, yade};

/// Named coefficients of a force model, as read from a scenario file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coefficients(pub BTreeMap<String, f64>);

impl<const N: usize> From<[(&str, f64); N]> for Coefficients {
    fn from(pairs: [(&str, f64); N]) -> Self {
        Coefficients(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }
}

/// One coefficient a model takes.
#[derive(Debug, Clone, Copy)]
pub struct CoefficientSpec {
    /// Its name.
    pub name: &'static str,
    /// Unit, for messages and documentation.
    pub unit: &'static str,
    /// Value when not given; `None` makes it required.
    pub default: Option<f64>,
    /// The allowed range in words.
    pub allowed: &'static str,
    /// Whether a value is in the allowed range.
    pub check: fn(f64) -> bool,
    /// What it means.
    pub doc: &'static str,
    /// How the values of two materials make the value of their pair.
    pub mixing: Mixing,
}

/// How the coefficient of a pair of materials follows from the two materials' values,
/// when the pair is not given its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mixing {
    /// `2 a b / (a + b)`: springs in series (stiffnesses).
    Harmonic,
    /// `√(a b)`: friction and restitution coefficients, as common in DEM codes.
    Geometric,
    /// `(a + b) / 2`: ratios and exponents.
    Arithmetic,
}

impl Mixing {
    /// The pair's value from the two materials' values; a material with itself keeps its
    /// value exactly.
    #[must_use]
    pub fn mix(self, a: f64, b: f64) -> f64 {
        if a.to_bits() == b.to_bits() {
            return a;
        }
        match self {
            Mixing::Harmonic if a + b == 0.0 => 0.0,
            Mixing::Harmonic => 2.0 * a * b / (a + b),
            Mixing::Geometric => (a * b).sqrt(),
            Mixing::Arithmetic => 0.5 * (a + b),
        }
    }

    /// The rule's name, as documentation writes it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mixing::Harmonic => "harmonic mean",
            Mixing::Geometric => "geometric mean",
            Mixing::Arithmetic => "arithmetic mean",
        }
    }
}

/// A registered model: its name, documentation, coefficients and constructor.
#[derive(Debug, Clone, Copy)]
pub struct ModelEntry {
    /// Name.
    pub name: &'static str,
    /// One line on what the model is.
    pub description: &'static str,
    /// The coefficients it takes.
    pub coefficients: &'static [CoefficientSpec],
    /// Names of its per-contact history values.
    pub history: &'static [&'static str],
    /// Builds the model from checked coefficients (every spec present, in range).
    pub build: fn(&BTreeMap<&'static str, f64>) -> Box<dyn ForceModel>,
}

/// Why a force model could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ForceModelError {
    /// No model of that name.
    #[error("unknown force model '{name}'; known models: {known}")]
    UnknownModel {
        /// The name given.
        name: String,
        /// The registered names.
        known: String,
    },
    /// A coefficient the model does not take.
    #[error("force model '{model}' has no coefficient '{name}'; its coefficients: {allowed}")]
    UnknownCoefficient {
        /// The model.
        model: String,
        /// The name given.
        name: String,
        /// The coefficients it takes.
        allowed: String,
    },
    /// A required coefficient is missing.
    #[error("force model '{model}' needs coefficient '{name}' ({unit}): {doc}")]
    MissingCoefficient {
        /// The model.
        model: String,
        /// The missing coefficient.
        name: &'static str,
        /// Its unit.
        unit: &'static str,
        /// What it means.
        doc: &'static str,
    },
    /// A coefficient is out of range.
    #[error("force model '{model}': coefficient '{name}' = {} is invalid; allowed: {allowed}", shown(*value))]
    InvalidCoefficient {
        /// The model.
        model: String,
        /// The coefficient.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range.
        allowed: &'static str,
    },
    /// Two models, or two parts of one role, registered under one name.
    #[error("{0} is already registered")]
    Duplicate(String),
    /// No part of that name in its role.
    #[error("unknown {role} part '{name}'; known {role} parts: {known}")]
    UnknownPart {
        /// The role.
        role: &'static str,
        /// The name given.
        name: String,
        /// The registered names in that role.
        known: String,
    },
    /// The parts do not make a law.
    #[error("{0}")]
    Composition(String),
}

/// A coefficient in a message: shortest round-trip digits, in exponent notation outside
/// [1e-4, 1e6) so that 1e300 is not printed as three hundred digits.
fn shown(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

pub(super) fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}
pub(super) fn non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}
pub(super) fn unit_interval(x: f64) -> bool {
    x.is_finite() && x > 0.0 && x <= 1.0
}
pub(super) fn at_least_one(x: f64) -> bool {
    x.is_finite() && x >= 1.0
}

const VOLUMETRIC: &[CoefficientSpec] = &[
    volumetric::STIFFNESS,
    RESTITUTION,
    FRICTION,
    TANGENTIAL_RATIO,
];

const YADE: &[CoefficientSpec] = &[yade::KN, yade::KS, yade::FRICTION_ANGLE];

const ENERGY: &[CoefficientSpec] = &[
    energy::STIFFNESS,
    energy::EXPONENT,
    CoefficientSpec {
        default: Some(1.0),
        ..RESTITUTION
    },
    FRICTION,
    TANGENTIAL_RATIO,
];

/// The preset `name` of `parts`, which make a law by construction (one part per role, the
/// history within bounds).
fn preset(name: &'static str, parts: Vec<Box<dyn Part>>) -> Box<dyn ForceModel> {
    match ComposedLaw::new(name, parts) {
        Ok(law) => Box::new(law),
        Err(e) => unreachable!("the built-in preset '{name}' is a valid law: {e}"),
    }
}

/// The built-in laws: presets of parts, under the names and coefficients they have always
/// had.
const BUILT_IN: [ModelEntry; 3] = [
    ModelEntry {
        name: "volumetric",
        description: "F_n = k V/ℓ at the overlap centroid, damping from restitution, Coulomb friction with a tangential spring",
        coefficients: VOLUMETRIC,
        history: &["spring_x", "spring_y", "spring_z"],
        build: |c| {
            let parts = [volumetric::ENTRY, damping::ENTRY, friction::ENTRY];
            preset("volumetric", parts.map(|p| (p.build)(c)).into())
        },
    },
    ModelEntry {
        name: "volumetric_yade",
        description: "Yade's PolyhedraVolumetricLaw: F_n = k_n V, incremental shear capped at tan φ F_n, no damping",
        coefficients: YADE,
        history: &["shear_x", "shear_y", "shear_z"],
        build: |c| {
            let parts = [yade::NORMAL_ENTRY, yade::SHEAR_ENTRY];
            preset("volumetric_yade", parts.map(|p| (p.build)(c)).into())
        },
    },
    ModelEntry {
        name: "energy_conserving",
        description: "Feng's potential-based law F = w'(V) S: a pressure on the projected contact area, unloading at e² of it, Coulomb friction with a tangential spring",
        coefficients: ENERGY,
        history: &["spring_x", "spring_y", "spring_z"],
        build: |c| {
            let parts = [energy::ENTRY, damping::UNLOADING_ENTRY, friction::ENTRY];
            preset("energy_conserving", parts.map(|p| (p.build)(c)).into())
        },
    },
];

/// The built-in parts.
const BUILT_IN_PARTS: [PartEntry; 13] = [
    volumetric::ENTRY,
    yade::NORMAL_ENTRY,
    energy::ENTRY,
    damping::ENTRY,
    damping::NONE_ENTRY,
    damping::UNLOADING_ENTRY,
    friction::ENTRY,
    friction::NONE_ENTRY,
    yade::SHEAR_ENTRY,
    twisting::ENTRY,
    rolling::ENTRY,
    cohesion::CAPILLARY_ENTRY,
    cohesion::AREA_ENTRY,
];

/// One part of a law to build: its role, its name and its coefficients.
#[derive(Debug, Clone, Copy)]
pub struct PartChoice<'a> {
    /// The role.
    pub role: Role,
    /// The registered name within the role.
    pub name: &'a str,
    /// Its coefficients; those left out take the part's defaults.
    pub coefficients: &'a Coefficients,
}

/// Force models by name, and the parts laws are composed of, by role and name.
#[derive(Debug, Clone)]
pub struct ForceModelRegistry {
    models: BTreeMap<&'static str, ModelEntry>,
    parts: BTreeMap<(Role, &'static str), PartEntry>,
}

impl Default for ForceModelRegistry {
    /// The registry of the built-in models.
    fn default() -> Self {
        ForceModelRegistry {
            models: BUILT_IN.iter().map(|m| (m.name, *m)).collect(),
            parts: BUILT_IN_PARTS
                .iter()
                .map(|p| ((p.role, p.name), *p))
                .collect(),
        }
    }
}

impl ForceModelRegistry {
    /// Adds a model.
    ///
    /// # Errors
    /// [`ForceModelError::Duplicate`] if the name is taken.
    pub fn register(&mut self, entry: ModelEntry) -> Result<(), ForceModelError> {
        if self.models.contains_key(entry.name) {
            return Err(ForceModelError::Duplicate(format!(
                "a force model named '{}'",
                entry.name
            )));
        }
        self.models.insert(entry.name, entry);
        Ok(())
    }

    /// The registered models, by name.
    pub fn entries(&self) -> impl Iterator<Item = &ModelEntry> {
        self.models.values()
    }

    /// Adds a part.
    ///
    /// # Errors
    /// [`ForceModelError::Duplicate`] if a part of that role and name exists.
    pub fn register_part(&mut self, entry: PartEntry) -> Result<(), ForceModelError> {
        let key = (entry.role, entry.name);
        if self.parts.contains_key(&key) {
            return Err(ForceModelError::Duplicate(format!(
                "a {} part named '{}'",
                entry.role.name(),
                entry.name
            )));
        }
        self.parts.insert(key, entry);
        Ok(())
    }

    /// The registered parts, by role and name.
    pub fn part_entries(&self) -> impl Iterator<Item = &PartEntry> {
        self.parts.values()
    }

    /// The law `name` composed of `parts`, each built from its coefficients.
    ///
    /// # Errors
    /// [`ForceModelError::UnknownPart`] for a part not registered in its role, the
    /// coefficient errors of [`ForceModelRegistry::build`] (naming the part), and
    /// [`ForceModelError::Composition`] when the parts do not make a law.
    pub fn build_law(
        &self,
        name: &str,
        parts: &[PartChoice],
    ) -> Result<Box<dyn ForceModel>, ForceModelError> {
        let mut built = Vec::with_capacity(parts.len());
        for choice in parts {
            let entry = self.parts.get(&(choice.role, choice.name)).ok_or_else(|| {
                ForceModelError::UnknownPart {
                    role: choice.role.name(),
                    name: choice.name.to_string(),
                    known: self
                        .parts
                        .keys()
                        .filter(|(role, _)| *role == choice.role)
                        .map(|(_, n)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?;
            let owner = format!("{name}, {} part {}", choice.role.name(), choice.name);
            let values = resolve(&owner, entry.coefficients, choice.coefficients)?;
            let part = (entry.build)(&values);
            if part.role() != choice.role {
                return Err(ForceModelError::Composition(format!(
                    "{owner}: the part it builds plays the {} role",
                    part.role().name()
                )));
            }
            built.push(part);
        }
        ComposedLaw::new(name, built)
            .map(|law| Box::new(law) as Box<dyn ForceModel>)
            .map_err(|e| ForceModelError::Composition(e.to_string()))
    }

    /// The model `name` with its coefficients checked and defaults filled in.
    ///
    /// # Errors
    /// [`ForceModelError`] for an unknown model, an unknown, missing or out-of-range
    /// coefficient.
    pub fn build(
        &self,
        name: &str,
        coefficients: &Coefficients,
    ) -> Result<Box<dyn ForceModel>, ForceModelError> {
        let entry = self
            .models
            .get(name)
            .ok_or_else(|| ForceModelError::UnknownModel {
                name: name.to_string(),
                known: self.models.keys().copied().collect::<Vec<_>>().join(", "),
            })?;
        let values = resolve(name, entry.coefficients, coefficients)?;
        Ok((entry.build)(&values))
    }
}

/// The values of `specs` for the coefficients `given` to `owner`: each given one known and
/// in range, defaults for those left out, none required missing.
fn resolve(
    owner: &str,
    specs: &[CoefficientSpec],
    given: &Coefficients,
) -> Result<BTreeMap<&'static str, f64>, ForceModelError> {
    let names = || specs.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
    for given in given.0.keys() {
        if !specs.iter().any(|c| c.name == given) {
            return Err(ForceModelError::UnknownCoefficient {
                model: owner.to_string(),
                name: given.clone(),
                allowed: names(),
            });
        }
    }
    let mut values = BTreeMap::new();
    for spec in specs {
        let value = match (given.0.get(spec.name), spec.default) {
            (Some(v), _) => *v,
            (None, Some(d)) => d,
            (None, None) => {
                return Err(ForceModelError::MissingCoefficient {
                    model: owner.to_string(),
                    name: spec.name,
                    unit: spec.unit,
                    doc: spec.doc,
                });
            }
        };
        if !(spec.check)(value) {
            return Err(ForceModelError::InvalidCoefficient {
                model: owner.to_string(),
                name: spec.name,
                value,
                allowed: spec.allowed,
            });
        }
        values.insert(spec.name, value);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_register_once_per_role_and_build_laws() {
        let mut r = ForceModelRegistry::default();
        let spring = *r
            .part_entries()
            .find(|p| p.role == Role::Tangential && p.name == "spring")
            .unwrap();
        let e = r.register_part(spring).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a tangential part named 'spring' is already registered"
        );
        // The same name in another role is another part; one whose constructor makes a
        // part of another role is refused when a law is built of it.
        r.register_part(PartEntry {
            role: Role::Damping,
            ..spring
        })
        .unwrap();
        let stiff = Coefficients::from([("stiffness", 1e6)]);
        let none = Coefficients::default();
        let choice = |role, name, coefficients| PartChoice {
            role,
            name,
            coefficients,
        };
        let law = r
            .build_law(
                "mine",
                &[
                    choice(Role::Normal, "volumetric", &stiff),
                    choice(Role::Twisting, "spring", &none),
                ],
            )
            .unwrap();
        assert_eq!((law.name(), law.history_len()), ("mine", 1));
        let e = r
            .build_law("mine", &[choice(Role::Damping, "restitution", &none)])
            .err()
            .unwrap();
        assert!(e.to_string().contains("no normal part"), "{e}");
        let e = r
            .build_law("mine", &[choice(Role::Normal, "volumetric", &none)])
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("mine, normal part volumetric")
                && e.to_string().contains("stiffness"),
            "{e}"
        );
    }

    #[test]
    fn every_built_in_model_builds_and_reports_errors() {
        let r = ForceModelRegistry::default();
        let m = r
            .build("volumetric", &Coefficients::from([("stiffness", 1e7)]))
            .unwrap();
        assert_eq!((m.name(), m.history_len()), ("volumetric", 3));
        assert!(
            r.build(
                "volumetric_yade",
                &Coefficients::from([("kn", 1e9), ("ks", 1e8)])
            )
            .is_ok()
        );
        assert!(
            r.build(
                "energy_conserving",
                &Coefficients::from([("stiffness", 1e6)])
            )
            .is_ok()
        );
        let e = r.build("hertz", &Coefficients::default()).err().unwrap();
        assert!(e.to_string().contains("volumetric_yade"), "{e}");
        let e = r
            .build("volumetric", &Coefficients::default())
            .err()
            .unwrap();
        assert!(matches!(
            e,
            ForceModelError::MissingCoefficient {
                name: "stiffness",
                ..
            }
        ));
        let e = r
            .build(
                "volumetric",
                &Coefficients::from([("stiffness", 1e7), ("stifness", 1.0)]),
            )
            .err()
            .unwrap();
        assert!(
            matches!(e, ForceModelError::UnknownCoefficient { .. })
                && e.to_string().contains("restitution")
        );
        for bad in [-1.0, f64::NAN, 1.5] {
            let e = r
                .build(
                    "volumetric",
                    &Coefficients::from([("stiffness", 1e7), ("restitution", bad)]),
                )
                .err()
                .unwrap();
            assert!(matches!(
                e,
                ForceModelError::InvalidCoefficient {
                    name: "restitution",
                    ..
                }
            ));
        }
        let mut r2 = r.clone();
        assert!(r2.register(BUILT_IN[0]).is_err());
    }
}
