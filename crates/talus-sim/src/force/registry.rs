//! Force models by name, with their named coefficients.

use std::collections::BTreeMap;

use thiserror::Error;

use super::friction::TangentialSpring;
use super::part::{ComposedLaw, Part};
use super::{FengNormal, ForceModel, RestitutionDamping, VolumetricNormal, YadeNormal, YadeShear};

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
    /// Two models registered under one name.
    #[error("a force model named '{0}' is already registered")]
    Duplicate(String),
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

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}
fn non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}
fn unit_interval(x: f64) -> bool {
    x.is_finite() && x > 0.0 && x <= 1.0
}
fn at_least_one(x: f64) -> bool {
    x.is_finite() && x >= 1.0
}

const FRICTION: CoefficientSpec = CoefficientSpec {
    name: "friction",
    unit: "1",
    default: Some(0.5),
    allowed: "a finite number ≥ 0",
    check: non_negative,
    doc: "Coulomb friction coefficient μ",
};
const TANGENTIAL_RATIO: CoefficientSpec = CoefficientSpec {
    name: "tangential_ratio",
    unit: "1",
    default: Some(2.0 / 7.0),
    allowed: "a finite number > 0",
    check: positive,
    doc: "tangential over normal stiffness k_t / K",
};
const RESTITUTION: CoefficientSpec = CoefficientSpec {
    name: "restitution",
    unit: "1",
    default: Some(0.5),
    allowed: "a number in (0, 1]",
    check: unit_interval,
    doc: "coefficient of restitution of a normal collision",
};

const VOLUMETRIC: &[CoefficientSpec] = &[
    CoefficientSpec {
        name: "stiffness",
        unit: "Pa",
        default: None,
        allowed: "a finite number > 0",
        check: positive,
        doc: "k in F_n = k V / ℓ",
    },
    RESTITUTION,
    FRICTION,
    TANGENTIAL_RATIO,
];

const YADE: &[CoefficientSpec] = &[
    CoefficientSpec {
        name: "kn",
        unit: "N/m³",
        default: None,
        allowed: "a finite number > 0",
        check: positive,
        doc: "normal stiffness per overlap volume, F_n = k_n V",
    },
    CoefficientSpec {
        name: "ks",
        unit: "N/m³",
        default: None,
        allowed: "a finite number > 0",
        check: positive,
        doc: "shear stiffness, ΔF_s = −k_s Δu_s",
    },
    CoefficientSpec {
        name: "friction_angle",
        unit: "rad",
        default: Some(0.5),
        allowed: "an angle in [0, π/2)",
        check: |x| x.is_finite() && (0.0..std::f64::consts::FRAC_PI_2).contains(&x),
        doc: "friction angle φ; shear capped at tan φ F_n",
    },
];

const ENERGY: &[CoefficientSpec] = &[
    CoefficientSpec {
        name: "stiffness",
        unit: "Pa",
        default: None,
        allowed: "a finite number > 0",
        check: positive,
        doc: "k in F = k (V/ℓ)^(p−1) S",
    },
    CoefficientSpec {
        name: "exponent",
        unit: "1",
        default: Some(1.0),
        allowed: "a finite number ≥ 1",
        check: at_least_one,
        doc: "p in the energy w = k ℓ^(1−p) V^p / p",
    },
    CoefficientSpec {
        default: Some(1.0),
        ..RESTITUTION
    },
    FRICTION,
    TANGENTIAL_RATIO,
];

fn spring(c: &BTreeMap<&'static str, f64>) -> Box<dyn Part> {
    Box::new(TangentialSpring {
        friction: c["friction"],
        stiffness_ratio: c["tangential_ratio"],
    })
}

fn restitution(c: &BTreeMap<&'static str, f64>) -> Box<dyn Part> {
    Box::new(RestitutionDamping {
        restitution: c["restitution"],
    })
}

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
            let normal = Box::new(VolumetricNormal {
                stiffness: c["stiffness"],
            });
            preset("volumetric", vec![normal, restitution(c), spring(c)])
        },
    },
    ModelEntry {
        name: "volumetric_yade",
        description: "Yade's PolyhedraVolumetricLaw: F_n = k_n V, incremental shear capped at tan φ F_n, no damping",
        coefficients: YADE,
        history: &["shear_x", "shear_y", "shear_z"],
        build: |c| {
            let normal = Box::new(YadeNormal { stiffness: c["kn"] });
            let shear = Box::new(YadeShear {
                stiffness: c["ks"],
                friction: c["friction_angle"].tan(),
            });
            preset("volumetric_yade", vec![normal, shear])
        },
    },
    ModelEntry {
        name: "energy_conserving",
        description: "Feng's potential-based law F = w'(V) S: a pressure on the projected contact area",
        coefficients: ENERGY,
        history: &["spring_x", "spring_y", "spring_z"],
        build: |c| {
            let normal = Box::new(FengNormal {
                stiffness: c["stiffness"],
                exponent: c["exponent"],
            });
            preset("energy_conserving", vec![normal, restitution(c), spring(c)])
        },
    },
];

/// Force models by name.
#[derive(Debug, Clone)]
pub struct ForceModelRegistry {
    models: BTreeMap<&'static str, ModelEntry>,
}

impl Default for ForceModelRegistry {
    /// The registry of the built-in models.
    fn default() -> Self {
        ForceModelRegistry {
            models: BUILT_IN.iter().map(|m| (m.name, *m)).collect(),
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
            return Err(ForceModelError::Duplicate(entry.name.to_string()));
        }
        self.models.insert(entry.name, entry);
        Ok(())
    }

    /// The registered models, by name.
    pub fn entries(&self) -> impl Iterator<Item = &ModelEntry> {
        self.models.values()
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
        let names = || {
            entry
                .coefficients
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        for given in coefficients.0.keys() {
            if !entry.coefficients.iter().any(|c| c.name == given) {
                return Err(ForceModelError::UnknownCoefficient {
                    model: name.to_string(),
                    name: given.clone(),
                    allowed: names(),
                });
            }
        }
        let mut values = BTreeMap::new();
        for spec in entry.coefficients {
            let value = match (coefficients.0.get(spec.name), spec.default) {
                (Some(v), _) => *v,
                (None, Some(d)) => d,
                (None, None) => {
                    return Err(ForceModelError::MissingCoefficient {
                        model: name.to_string(),
                        name: spec.name,
                        unit: spec.unit,
                        doc: spec.doc,
                    });
                }
            };
            if !(spec.check)(value) {
                return Err(ForceModelError::InvalidCoefficient {
                    model: name.to_string(),
                    name: spec.name,
                    value,
                    allowed: spec.allowed,
                });
            }
            values.insert(spec.name, value);
        }
        Ok((entry.build)(&values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
