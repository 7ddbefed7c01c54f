//! Contact coefficients per pair of materials: each material may give its own values of the
//! force model's coefficients, a pair's value is then mixed from its two materials' by the
//! coefficient's rule (harmonic mean for stiffnesses, geometric for friction and
//! restitution, arithmetic for ratios; `talus models` names each) unless `force_model.pairs`
//! gives the pair its own, and a coefficient no material gives keeps the force model's value.
//! A wall without a material meets a grain with the coefficients of the grain's material with
//! itself.

use std::collections::BTreeMap;

use talus_sim::force::{CoefficientSpec, ForceModelRegistry, Role};

use crate::number::short;
use crate::schema::{ForceModelSpec, MaterialSpec, Scenario};

/// Where a pair's coefficient comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The force model's value (or its part's), or the coefficient's default.
    Law,
    /// A material's own value, for grains of one material.
    Material,
    /// Mixed from the two materials' values.
    Mixed,
    /// Given for the pair in `force_model.pairs`.
    Pair,
}

/// One resolved coefficient of a pair.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairCoefficient {
    /// Its name, with its part's role for a law of parts (`tangential.friction`).
    pub label: String,
    /// The value.
    pub value: f64,
    /// Where it comes from.
    pub source: Source,
}

/// Why a scenario's coefficients per material or pair cannot be resolved: the field, what is
/// wrong, what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairError {
    /// The field, e.g. `materials[1].coefficients.fricton`.
    pub field: String,
    /// What is wrong.
    pub problem: String,
    /// What would be accepted.
    pub allowed: String,
}

/// The coefficients of one part of a law (of the whole law for a registered model): its
/// role, its specs and the values the file gives.
type Group<'a> = (
    Option<Role>,
    &'static [CoefficientSpec],
    &'a BTreeMap<String, f64>,
);

/// The coefficient groups of the scenario's law: one for a registered model, one per part
/// for a law of parts.
fn groups<'a>(registry: &'a ForceModelRegistry, spec: &'a ForceModelSpec) -> Vec<Group<'a>> {
    match &spec.parts {
        None => registry
            .entries()
            .find(|e| e.name == spec.name)
            .map(|e| vec![(None, e.coefficients, &spec.coefficients)])
            .unwrap_or_default(),
        Some(parts) => parts
            .chosen()
            .into_iter()
            .filter_map(|(role, p)| {
                registry
                    .part_entries()
                    .find(|e| e.role == role && e.name == p.name)
                    .map(|e| (Some(role), e.coefficients, &p.coefficients))
            })
            .collect(),
    }
}

/// Whether the scenario gives coefficients per material or per pair at all: without any,
/// one law holds for every pair.
#[must_use]
pub fn has_pairs(s: &Scenario) -> bool {
    !s.force_model.pairs.is_empty() || s.materials.iter().any(|m| !m.coefficients.is_empty())
}

/// Checks that every coefficient a material or a pair gives is one the law takes, and that
/// the pairs name known materials, each pair once.
///
/// # Errors
/// The first [`PairError`] found.
pub fn check(registry: &ForceModelRegistry, s: &Scenario) -> Result<(), PairError> {
    let groups = groups(registry, &s.force_model);
    let mut known: Vec<&str> = groups
        .iter()
        .flat_map(|(_, specs, _)| specs.iter().map(|c| c.name))
        .collect();
    known.sort_unstable();
    known.dedup();
    let takes = |field: String, map: &BTreeMap<String, f64>| -> Result<(), PairError> {
        for (name, value) in map {
            if !known.contains(&name.as_str()) {
                return Err(PairError {
                    field: format!("{field}.{name}"),
                    problem: format!(
                        "force model '{}' takes no coefficient '{name}'",
                        s.force_model.name
                    ),
                    allowed: format!("one of {}", known.join(", ")),
                });
            }
            if !value.is_finite() {
                return Err(PairError {
                    field: format!("{field}.{name}"),
                    problem: format!("{} is not finite", short(*value)),
                    allowed: "a finite number in the coefficient's range".into(),
                });
            }
        }
        Ok(())
    };
    for (i, m) in s.materials.iter().enumerate() {
        takes(format!("materials[{i}].coefficients"), &m.coefficients)?;
    }
    let material_names = || {
        s.materials
            .iter()
            .map(|m| format!("'{}'", m.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut seen: Vec<(usize, usize)> = Vec::new();
    for (k, pair) in s.force_model.pairs.iter().enumerate() {
        let field = format!("force_model.pairs[{k}]");
        let mut ends = [0; 2];
        for (end, name) in ends.iter_mut().zip([&pair.materials.0, &pair.materials.1]) {
            *end = s
                .materials
                .iter()
                .position(|m| &m.name == name)
                .ok_or_else(|| PairError {
                    field: format!("{field}.materials"),
                    problem: format!("no material named '{name}'"),
                    allowed: format!("one of {}", material_names()),
                })?;
        }
        let key = (ends[0].min(ends[1]), ends[0].max(ends[1]));
        if seen.contains(&key) {
            return Err(PairError {
                field: format!("{field}.materials"),
                problem: format!(
                    "the pair '{}'–'{}' is given twice",
                    pair.materials.0, pair.materials.1
                ),
                allowed: "each pair of materials once".into(),
            });
        }
        seen.push(key);
        takes(format!("{field}.coefficients"), &pair.coefficients)?;
    }
    Ok(())
}

/// The force model of the pair of materials `a`, `b` (indices into `s.materials`): the
/// scenario's, its coefficient maps filled with the pair's values where a material or the
/// pair gives them; and every coefficient of the law with its value and source (a required
/// coefficient that nothing gives is left out: building the law reports it).
#[must_use]
pub fn pair_law(
    registry: &ForceModelRegistry,
    s: &Scenario,
    a: usize,
    b: usize,
) -> (ForceModelSpec, Vec<PairCoefficient>) {
    let (ma, mb): (&MaterialSpec, &MaterialSpec) = (&s.materials[a], &s.materials[b]);
    let given = s.force_model.pairs.iter().find(|p| {
        (p.materials.0 == ma.name && p.materials.1 == mb.name)
            || (p.materials.0 == mb.name && p.materials.1 == ma.name)
    });
    let mut law = s.force_model.clone();
    law.pairs = Vec::new();
    let mut table = Vec::new();
    let mut maps: Vec<BTreeMap<String, f64>> = Vec::new();
    for (role, specs, base) in groups(registry, &s.force_model) {
        let mut map = base.clone();
        for c in specs {
            let label = match role {
                Some(role) => format!("{}.{}", role.name(), c.name),
                None => c.name.to_string(),
            };
            let law_value = base.get(c.name).copied().or(c.default);
            let own = |m: &MaterialSpec| m.coefficients.get(c.name).copied().or(law_value);
            let resolved = if let Some(v) = given.and_then(|p| p.coefficients.get(c.name)) {
                Some((*v, Source::Pair))
            } else if ma.coefficients.contains_key(c.name) || mb.coefficients.contains_key(c.name) {
                let source = if a == b {
                    Source::Material
                } else {
                    Source::Mixed
                };
                own(ma)
                    .zip(own(mb))
                    .map(|(x, y)| (c.mixing.mix(x, y), source))
            } else {
                law_value.map(|v| (v, Source::Law))
            };
            if let Some((value, source)) = resolved {
                if source != Source::Law {
                    map.insert(c.name.to_string(), value);
                }
                table.push(PairCoefficient {
                    label,
                    value,
                    source,
                });
            }
        }
        maps.push(map);
    }
    match &mut law.parts {
        None => {
            if let Some(map) = maps.pop() {
                law.coefficients = map;
            }
        }
        Some(parts) => {
            for (part, map) in parts.chosen_mut().zip(maps) {
                part.coefficients = map;
            }
        }
    }
    (law, table)
}

/// The resolved coefficients of a pair of materials that can meet, as `talus check` reports
/// them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairReport {
    /// The two materials.
    pub materials: (String, String),
    /// Whether grains of the two materials can meet (both are grains' materials).
    pub grains: bool,
    /// The walls where grains of one material meet the other (a wall without a material
    /// counts as the grain's).
    pub walls: Vec<String>,
    /// Every coefficient of the pair's law.
    pub coefficients: Vec<PairCoefficient>,
}

/// The resolved coefficients of every pair of materials that can meet.
#[must_use]
pub fn report(registry: &ForceModelRegistry, s: &Scenario) -> Vec<PairReport> {
    let grain_materials: Vec<&str> = s.grains.iter().map(|p| p.material.as_str()).collect();
    pairs_in_play(s)
        .into_iter()
        .map(|(a, b, walls)| {
            let (ma, mb) = (&s.materials[a].name, &s.materials[b].name);
            PairReport {
                materials: (ma.clone(), mb.clone()),
                grains: grain_materials.contains(&ma.as_str())
                    && grain_materials.contains(&mb.as_str()),
                walls: walls.into_iter().map(str::to_string).collect(),
                coefficients: pair_law(registry, s, a, b).1,
            }
        })
        .collect()
}

/// The pairs of materials that can meet in the scenario: the grains' materials among
/// themselves and with each wall's material, each pair once with the walls it concerns.
#[must_use]
pub fn pairs_in_play(s: &Scenario) -> Vec<(usize, usize, Vec<&str>)> {
    let index = |name: &str| s.materials.iter().position(|m| m.name == name);
    let mut grains: Vec<usize> = s.grains.iter().filter_map(|p| index(&p.material)).collect();
    grains.sort_unstable();
    grains.dedup();
    fn add<'a>(
        pairs: &mut Vec<(usize, usize, Vec<&'a str>)>,
        a: usize,
        b: usize,
        wall: Option<&'a str>,
    ) {
        let key = (a.min(b), a.max(b));
        let at = match pairs.iter().position(|p| (p.0, p.1) == key) {
            Some(at) => at,
            None => {
                pairs.push((key.0, key.1, Vec::new()));
                pairs.len() - 1
            }
        };
        pairs[at].2.extend(wall);
    }
    let mut pairs = Vec::new();
    for (i, &a) in grains.iter().enumerate() {
        for &b in &grains[i..] {
            add(&mut pairs, a, b, None);
        }
    }
    for w in &s.walls {
        let wall_material = w.material.as_deref().and_then(index);
        for &g in &grains {
            add(&mut pairs, g, wall_material.unwrap_or(g), Some(&w.name));
        }
    }
    pairs.sort_by_key(|p| (p.0, p.1));
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{PairSpec, PartSpec, PartsSpec};

    fn scenario() -> Scenario {
        let path = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/angle_of_repose.ron"
        ));
        let mut s = crate::load::read(path).unwrap();
        // The law's stiffness pinned, whatever the shipped file's.
        s.force_model.coefficients.insert("stiffness".into(), 5e5);
        s.materials.push(MaterialSpec {
            name: "steel".into(),
            density: 7800.0,
            coefficients: BTreeMap::from([("friction".into(), 0.15), ("stiffness".into(), 2e6)]),
        });
        s.materials[0]
            .coefficients
            .insert("restitution".into(), 0.5);
        s
    }

    fn value(table: &[PairCoefficient], label: &str) -> (f64, Source) {
        let c = table.iter().find(|c| c.label == label).unwrap();
        (c.value, c.source)
    }

    #[test]
    fn a_pair_mixes_its_materials_unless_given_its_own() {
        let registry = ForceModelRegistry::default();
        let mut s = scenario();
        check(&registry, &s).unwrap();
        // quartz: μ 0.6, k 5e5 (the law's), e 0.5 (its own); steel: μ 0.15, k 2e6, e 0.3.
        let (law, table) = pair_law(&registry, &s, 0, 1);
        let (friction, source) = value(&table, "friction"); // √(0.6 · 0.15)
        assert!((friction - 0.3).abs() < 1e-15 && source == Source::Mixed);
        assert_eq!(value(&table, "stiffness"), (8e5, Source::Mixed)); // 2 k k' / (k + k')
        assert_eq!(value(&table, "restitution").1, Source::Mixed);
        assert!((value(&table, "restitution").0 - 0.15f64.sqrt()).abs() < 1e-15);
        assert_eq!(value(&table, "tangential_ratio"), (2.0 / 7.0, Source::Law));
        assert_eq!(law.coefficients["friction"], friction);
        assert!(!law.coefficients.contains_key("tangential_ratio"));
        // A material with itself keeps its own values exactly.
        let (_, table) = pair_law(&registry, &s, 1, 1);
        assert_eq!(value(&table, "stiffness"), (2e6, Source::Material));
        // A pair's own value wins.
        s.force_model.pairs.push(PairSpec {
            materials: ("steel".into(), "quartz".into()),
            coefficients: BTreeMap::from([("friction".into(), 0.1)]),
        });
        let (_, table) = pair_law(&registry, &s, 0, 1);
        assert_eq!(value(&table, "friction"), (0.1, Source::Pair));
        assert_eq!(value(&table, "stiffness"), (8e5, Source::Mixed));
    }

    #[test]
    fn a_law_of_parts_takes_the_values_in_every_part_that_has_them() {
        let registry = ForceModelRegistry::default();
        let mut s = scenario();
        s.force_model.coefficients.clear();
        s.force_model.parts = Some(PartsSpec {
            normal: PartSpec::new("volumetric", &[("stiffness", 5e5)]),
            damping: Some(PartSpec::new("restitution", &[("restitution", 0.3)])),
            tangential: Some(PartSpec::new("spring", &[("friction", 0.6)])),
            twisting: Some(PartSpec::new("spring", &[("friction", 0.4)])),
            rolling: None,
            cohesion: None,
        });
        let (law, table) = pair_law(&registry, &s, 1, 1);
        let parts = law.parts.unwrap();
        assert_eq!(parts.tangential.unwrap().coefficients["friction"], 0.15);
        assert_eq!(parts.twisting.unwrap().coefficients["friction"], 0.15);
        assert_eq!(value(&table, "normal.stiffness"), (2e6, Source::Material));
        // Quartz has no friction of its own: the pair mixes each part's value with steel's.
        let (_, table) = pair_law(&registry, &s, 0, 1);
        assert_eq!(
            value(&table, "tangential.friction").0,
            (0.6f64 * 0.15).sqrt()
        );
        assert_eq!(value(&table, "twisting.friction").0, (0.4f64 * 0.15).sqrt());
    }

    #[test]
    fn unknown_coefficients_materials_and_repeated_pairs_are_refused() {
        let registry = ForceModelRegistry::default();
        let mut s = scenario();
        s.materials[1].coefficients.insert("fricton".into(), 0.2);
        let e = check(&registry, &s).unwrap_err();
        assert_eq!(e.field, "materials[1].coefficients.fricton");
        assert!(e.allowed.contains("friction"), "{e:?}");
        s.materials[1].coefficients.remove("fricton");
        let pair = |a: &str, b: &str| PairSpec {
            materials: (a.into(), b.into()),
            coefficients: BTreeMap::from([("friction".into(), 0.2)]),
        };
        s.force_model.pairs = vec![pair("quartz", "glass")];
        let e = check(&registry, &s).unwrap_err();
        assert!(e.problem.contains("'glass'"), "{e:?}");
        s.force_model.pairs = vec![pair("quartz", "steel"), pair("steel", "quartz")];
        let e = check(&registry, &s).unwrap_err();
        assert_eq!(e.field, "force_model.pairs[1].materials");
    }

    #[test]
    fn the_pairs_in_play_are_the_grains_among_themselves_and_with_each_wall() {
        let mut s = scenario();
        s.walls[0].material = Some("steel".into());
        let pairs = pairs_in_play(&s);
        let (quartz_quartz, quartz_steel) = (&pairs[0], &pairs[1]);
        assert_eq!(pairs.len(), 2);
        assert_eq!((quartz_quartz.0, quartz_quartz.1), (0, 0));
        assert_eq!(quartz_quartz.2, ["back", "left", "right", "gate"]);
        assert_eq!(
            (quartz_steel.0, quartz_steel.1, &quartz_steel.2[..]),
            (0, 1, &["floor"][..])
        );
    }
}
