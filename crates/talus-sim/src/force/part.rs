//! Contact laws made of parts (LIGGGHTS' and LAMMPS `pair granular`'s sub-models): a normal
//! law, a normal damping, a tangential law, a twisting and a rolling resistance and a
//! cohesion, each a [`Part`] with its own coefficients and history, met in that order for every contact,
//! each reading what the parts before it found ([`Partial`]). A [`ComposedLaw`] is a [`ForceModel`]; the built-in models are
//! presets of parts (see the registry).

use talus_geom::glam::DVec3;

use std::collections::BTreeMap;

use super::{CoefficientSpec, ContactInput, ContactLoad, ForceModel, MAX_HISTORY, SideSprings};

/// The role of a part in a law: a law has at most one part of each role, and they are met
/// in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// The elastic normal force and its stiffness.
    Normal,
    /// A dashpot on the normal relative velocity.
    Damping,
    /// The force in the tangent plane (friction).
    Tangential,
    /// A couple about the normal against the relative spin.
    Twisting,
    /// A couple about an axis in the tangent plane against the relative rolling.
    Rolling,
    /// An attraction along the normal (a liquid bridge, dry adhesion).
    Cohesion,
}

impl Role {
    /// The role's name, as a scenario file writes it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Role::Normal => "normal",
            Role::Damping => "damping",
            Role::Tangential => "tangential",
            Role::Twisting => "twisting",
            Role::Rolling => "rolling",
            Role::Cohesion => "cohesion",
        }
    }
}

/// What the parts of a law have found so far for one contact.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Partial {
    /// Normal stiffness dF/dδ at this contact (from the normal part).
    pub stiffness: f64,
    /// The normal force along the overlap normal, positive pushing the grains apart: the
    /// elastic force, then with the damping added.
    pub normal: f64,
    /// The dashpot coefficient (force per velocity) the damping part sets for the normal
    /// direction, from which the tangential, twisting and rolling parts scale theirs; zero
    /// without one. A damping without a normal dashpot (by unloading) gives the one of its
    /// damping ratio.
    pub damping: f64,
    /// The force in the tangent plane on the second grain.
    pub tangential: DVec3,
    /// A couple on the second grain.
    pub torque: DVec3,
    /// An attraction along the normal, pulling the grains together (from the cohesion
    /// part); it does not count towards the friction limits, which follow `normal`.
    pub cohesion: f64,
}

/// A part's spring beside the normal one, as the critical time step counts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spring {
    /// A force in the tangent plane at the contact, of this stiffness (N/m): it moves the
    /// grain along the plane and turns it by the contact's arm.
    Force(f64),
    /// A couple of this stiffness (N m per radian): it turns the grain only.
    Couple(f64),
}

/// One part of a contact law.
pub trait Part: Send + Sync {
    /// Its role.
    fn role(&self) -> Role;

    /// History values it keeps per contact (zero when a contact starts).
    fn history_len(&self) -> usize {
        0
    }

    /// Adds its share to `partial` for one contact, with its own slice of the history.
    fn apply(&self, contact: &ContactInput, partial: &mut Partial, history: &mut [f64]);

    /// For a normal part: the stiffness dF/dδ of a contact of projected `area` between
    /// grains of characteristic `length` (the basis of the critical time step).
    fn normal_stiffness(&self, _area: f64, _length: f64) -> Option<f64> {
        None
    }

    /// For a part with a spring beside the normal one (tangential, twisting, rolling): its
    /// stiffness at a contact of normal stiffness `normal` and projected `area` between two
    /// grains of characteristic `length` (their equivalent radius), at its largest lever
    /// (a rolling radius reaches the grain's equivalent radius against a wall). The critical
    /// time step counts it where it is stiffer than the normal spring; a part whose spring
    /// can be stiff must give it, or a step the rule allows may be unstable.
    fn spring(&self, _normal: f64, _area: f64, _length: f64) -> Option<Spring> {
        None
    }

    /// For a damping part: the damping ratio ζ of its dashpot.
    fn damping_ratio(&self) -> Option<f64> {
        None
    }

    /// The largest gap at which the part acts (see [`ForceModel::range`]).
    fn range(&self) -> f64 {
        0.0
    }
}

/// A registered part: its role, name, documentation, coefficients and constructor. Each
/// part's entry is defined next to its code.
#[derive(Debug, Clone, Copy)]
pub struct PartEntry {
    /// Its role.
    pub role: Role,
    /// Its name (unique within the role).
    pub name: &'static str,
    /// One line on what it is.
    pub description: &'static str,
    /// The coefficients it takes.
    pub coefficients: &'static [CoefficientSpec],
    /// Names of its per-contact history values.
    pub history: &'static [&'static str],
    /// Builds the part from checked coefficients (every spec present, in range).
    pub build: fn(&BTreeMap<&'static str, f64>) -> Box<dyn Part>,
}

/// Why parts do not make a law.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompositionError {
    /// No normal part.
    #[error("contact law '{0}' has no normal part")]
    NoNormal(String),
    /// Two parts of one role.
    #[error("contact law '{law}' has two {role} parts")]
    TwoOfRole {
        /// The law.
        law: String,
        /// The role.
        role: &'static str,
    },
    /// More history than a contact keeps inline.
    #[error("contact law '{law}' keeps {len} history values per contact; at most {MAX_HISTORY}")]
    History {
        /// The law.
        law: String,
        /// Its history length.
        len: usize,
    },
}

/// A contact law composed of parts, met in the order of their roles.
pub struct ComposedLaw {
    name: String,
    /// The parts, by role, with where their history starts.
    parts: Vec<(Box<dyn Part>, usize)>,
    history_len: usize,
    /// The largest of its parts' ranges (asked of every pair that does not touch).
    range: f64,
}

impl ComposedLaw {
    /// The law `name` of `parts` (in any order): exactly one normal part, at most one of each
    /// other role.
    ///
    /// # Errors
    /// [`CompositionError`] for a missing normal part, two parts of a role, or more history
    /// than [`MAX_HISTORY`].
    pub fn new(name: &str, mut parts: Vec<Box<dyn Part>>) -> Result<Self, CompositionError> {
        parts.sort_by_key(|p| p.role());
        if parts.first().is_none_or(|p| p.role() != Role::Normal) {
            return Err(CompositionError::NoNormal(name.to_string()));
        }
        if let Some(w) = parts.windows(2).find(|w| w[0].role() == w[1].role()) {
            return Err(CompositionError::TwoOfRole {
                law: name.to_string(),
                role: w[0].role().name(),
            });
        }
        let mut start = 0;
        let parts: Vec<(Box<dyn Part>, usize)> = parts
            .into_iter()
            .map(|p| {
                let at = start;
                start += p.history_len();
                (p, at)
            })
            .collect();
        if start > MAX_HISTORY {
            return Err(CompositionError::History {
                law: name.to_string(),
                len: start,
            });
        }
        Ok(ComposedLaw {
            name: name.to_string(),
            range: parts.iter().map(|(p, _)| p.range()).fold(0.0, f64::max),
            parts,
            history_len: start,
        })
    }
}

impl ForceModel for ComposedLaw {
    fn name(&self) -> &str {
        &self.name
    }

    fn history_len(&self) -> usize {
        self.history_len
    }

    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        let mut partial = Partial::default();
        for (part, start) in &self.parts {
            let end = start + part.history_len();
            part.apply(contact, &mut partial, &mut history[*start..end]);
        }
        ContactLoad {
            force: contact.overlap.normal * (partial.normal - partial.cohesion)
                + partial.tangential,
            torque: partial.torque,
        }
    }

    fn normal_stiffness(&self, area: f64, length: f64) -> f64 {
        // The normal part is first (checked when the law was made).
        self.parts
            .first()
            .and_then(|(p, _)| p.normal_stiffness(area, length))
            .unwrap_or(0.0)
    }

    fn side_springs(&self, area: f64, length: f64) -> SideSprings {
        let normal = self.normal_stiffness(area, length);
        let mut side = SideSprings::default();
        for (part, _) in &self.parts {
            match part.spring(normal, area, length) {
                Some(Spring::Force(k)) => side.force = side.force.max(k),
                Some(Spring::Couple(k)) => side.couple = side.couple.max(k),
                None => {}
            }
        }
        side
    }

    fn damping_ratio(&self) -> f64 {
        self.parts
            .iter()
            .find_map(|(p, _)| p.damping_ratio())
            .unwrap_or(0.0)
    }

    fn range(&self) -> f64 {
        self.range
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::force::{RestitutionDamping, TangentialSpring, VolumetricNormal, YadeShear};

    fn normal() -> Box<dyn Part> {
        Box::new(VolumetricNormal { stiffness: 1e6 })
    }

    fn spring() -> Box<dyn Part> {
        Box::new(TangentialSpring {
            friction: 0.5,
            stiffness_ratio: 0.3,
        })
    }

    #[test]
    fn a_law_needs_one_normal_part_and_one_part_per_role() {
        let damping = || -> Box<dyn Part> { Box::new(RestitutionDamping { restitution: 0.5 }) };
        assert!(matches!(
            ComposedLaw::new("x", vec![damping(), spring()]),
            Err(CompositionError::NoNormal(_))
        ));
        assert!(matches!(
            ComposedLaw::new("x", vec![normal(), normal()]),
            Err(CompositionError::TwoOfRole { role: "normal", .. })
        ));
        let shear = Box::new(YadeShear {
            stiffness: 1.0,
            friction: 0.5,
        });
        assert!(matches!(
            ComposedLaw::new("x", vec![normal(), spring(), shear]),
            Err(CompositionError::TwoOfRole {
                role: "tangential",
                ..
            })
        ));
        // Given in any order, met in the order of the roles.
        let law = ComposedLaw::new("x", vec![spring(), damping(), normal()]).unwrap();
        let roles: Vec<Role> = law.parts.iter().map(|(p, _)| p.role()).collect();
        assert_eq!(roles, [Role::Normal, Role::Damping, Role::Tangential]);
        assert_eq!(law.history_len(), 3);
    }

    #[test]
    fn each_part_keeps_its_own_history() {
        // Two parts of 3 values would overflow nothing; a part's slice starts after the
        // parts before it.
        struct Counter(Role, usize);
        impl Part for Counter {
            fn role(&self) -> Role {
                self.0
            }
            fn history_len(&self) -> usize {
                self.1
            }
            fn apply(&self, _: &ContactInput, _: &mut Partial, history: &mut [f64]) {
                assert_eq!(history.len(), self.1);
                for h in history.iter_mut() {
                    *h += 1.0 + self.0 as usize as f64;
                }
            }
            fn normal_stiffness(&self, _: f64, _: f64) -> Option<f64> {
                Some(1.0)
            }
        }
        let law = ComposedLaw::new(
            "x",
            vec![
                Box::new(Counter(Role::Tangential, 3)),
                Box::new(Counter(Role::Normal, 2)),
            ],
        )
        .unwrap();
        let input = ContactInput::face_on();
        let mut history = [0.0; 5];
        law.load(&input, &mut history);
        assert_eq!(history, [1.0, 1.0, 3.0, 3.0, 3.0]);
        let too_long = ComposedLaw::new(
            "x",
            vec![
                Box::new(Counter(Role::Normal, 6)),
                Box::new(Counter(Role::Tangential, 3)),
            ],
        );
        assert!(matches!(
            too_long,
            Err(CompositionError::History { len: 9, .. })
        ));
    }
}
