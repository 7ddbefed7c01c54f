//! Contact laws from the command line: `talus models` lists every part of every role with
//! its coefficients and history, and `talus check` prints the coefficients of every pair of
//! materials that can meet, mixed by each coefficient's rule.

mod common;

use std::collections::BTreeMap;

use common::{talus, text};
use talus_sim::force::ForceModelRegistry;

/// The parts a law may be made of, by role, with the history each keeps per contact.
const PARTS: [(&str, &str, &[&str]); 13] = [
    ("normal", "feng", &[]),
    ("normal", "volumetric", &[]),
    ("normal", "yade", &[]),
    ("damping", "none", &[]),
    ("damping", "restitution", &[]),
    ("damping", "unloading", &[]),
    ("tangential", "none", &[]),
    (
        "tangential",
        "spring",
        &["spring_x", "spring_y", "spring_z"],
    ),
    (
        "tangential",
        "yade_shear",
        &["shear_x", "shear_y", "shear_z"],
    ),
    ("twisting", "spring", &["twist"]),
    ("rolling", "epsd", &["roll_x", "roll_y", "roll_z"]),
    ("cohesion", "area", &[]),
    ("cohesion", "capillary", &["bridge"]),
];

/// One entry of `talus models`: its coefficients' names and its history line.
#[derive(Debug, Default)]
struct Listed {
    coefficients: Vec<String>,
    history: Option<String>,
}

/// The entries of `talus models` after the line starting with `section`, by their heading
/// (`volumetric`, `tangential spring`), up to the next section.
fn entries(stdout: &str, section: &str) -> BTreeMap<String, Listed> {
    let mut listed = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut inside = false;
    for line in stdout.lines() {
        if line.starts_with(section) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.is_empty() {
            break;
        }
        if let Some(detail) = line.strip_prefix("  ") {
            let entry: &mut Listed = listed.entry(current.clone().unwrap()).or_default();
            match detail.strip_prefix("history: ") {
                Some(history) => entry.history = Some(history.to_string()),
                None => entry
                    .coefficients
                    .push(detail.split_whitespace().next().unwrap().to_string()),
            }
        } else if let Some((heading, _)) = line.split_once(": ") {
            current = Some(heading.to_string());
            listed.insert(heading.to_string(), Listed::default());
        }
    }
    listed
}

/// The history line of a part keeping `names`.
fn history_line(names: &[&str]) -> String {
    match names.len() {
        0 => "none".to_string(),
        1 => format!("1 value per contact ({})", names[0]),
        n => format!("{n} values per contact ({})", names.join(", ")),
    }
}

#[test]
fn models_lists_every_part_of_every_role_with_its_coefficients_and_history() {
    let out = talus(&["models"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let parts = entries(&stdout, "parts (");
    let expected: Vec<String> = PARTS.iter().map(|(r, n, _)| format!("{r} {n}")).collect();
    assert_eq!(
        parts.keys().cloned().collect::<Vec<_>>(),
        {
            let mut sorted = expected.clone();
            sorted.sort();
            sorted
        },
        "{stdout}"
    );
    for (role, name, history) in PARTS {
        let listed = &parts[&format!("{role} {name}")];
        assert_eq!(
            listed.history.as_deref(),
            Some(history_line(history).as_str()),
            "{role} {name}"
        );
    }
    // Each with the coefficients and history it is registered with.
    let registry = ForceModelRegistry::default();
    for entry in registry.part_entries() {
        let listed = &parts[&format!("{} {}", entry.role.name(), entry.name)];
        let names: Vec<&str> = entry.coefficients.iter().map(|c| c.name).collect();
        assert_eq!(
            listed.coefficients,
            names,
            "{} {}",
            entry.role.name(),
            entry.name
        );
        assert_eq!(
            listed.history.as_deref(),
            Some(history_line(entry.history).as_str())
        );
    }
    // The force models too.
    let models = entries(&stdout, "force models (");
    assert_eq!(models.len(), registry.entries().count(), "{stdout}");
    for entry in registry.entries() {
        let listed = &models[entry.name];
        assert_eq!(
            listed.history.as_deref(),
            Some(history_line(entry.history).as_str()),
            "{}",
            entry.name
        );
    }
    assert!(
        stdout.contains("at most 8 history values per contact"),
        "{stdout}"
    );
}

/// Grains of quartz and glass in a box whose floor is steel and whose side has no
/// material; each material gives some of the volumetric law's coefficients, the law the
/// rest, and the glass–steel pair its own friction.
const MIXED: &str = r#"
Scenario(
    name: "mixed",
    seed: 1,
    time: (dt: 1e-6, end: 1e-4, output_interval: 1e-4),
    gravity: (0.0, 0.0, -9.81),
    materials: [
        (name: "quartz", density: 2650.0, coefficients: {"stiffness": 1e6, "friction": 0.6}),
        (name: "glass", density: 2500.0, coefficients: {"stiffness": 4e6, "friction": 0.3, "restitution": 0.8}),
        (name: "steel", density: 7800.0, coefficients: {"stiffness": 2e7, "friction": 0.2, "restitution": 0.9, "tangential_ratio": 0.4}),
    ],
    force_model: (
        name: "volumetric",
        coefficients: {"stiffness": 5e5, "restitution": 0.5, "friction": 0.5},
        pairs: [(materials: ("steel", "glass"), coefficients: {"friction": 0.15})],
    ),
    grains: [
        (
            name: "sand", count: 4, vertices: 12, semi_axes: (0.004, 0.004, 0.004), material: "quartz",
            placement: Lattice(min: (0.0, 0.0, 0.01), max: (0.04, 0.04, 0.02)),
        ),
        (
            name: "beads", count: 4, vertices: 12, semi_axes: (0.004, 0.004, 0.004), material: "glass",
            placement: Lattice(min: (0.0, 0.0, 0.03), max: (0.04, 0.04, 0.04)),
        ),
    ],
    walls: [
        (name: "floor", shape: Plane(point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0)), material: "steel"),
        (name: "side", shape: Plane(point: (-0.01, 0.0, 0.0), normal: (1.0, 0.0, 0.0))),
    ],
)
"#;

/// A pair's line of the "contact pairs" section: where it meets, and each coefficient's
/// value and source (empty for the law's own).
type PairLine = (String, BTreeMap<String, (f64, String)>);

/// The "contact pairs" section of `talus check`, by pair (`quartz–glass`).
fn pairs(stdout: &str) -> BTreeMap<String, PairLine> {
    let mut found = BTreeMap::new();
    let section = stdout
        .split_once("  contact pairs:\n")
        .map_or("", |(_, rest)| rest);
    for line in section.lines() {
        let Some(line) = line.strip_prefix("    ") else {
            break;
        };
        let (pair, rest) = line.split_once(" (").unwrap();
        let (meets, coefficients) = rest.split_once("): ").unwrap();
        let values = coefficients
            .split(", ")
            .map(|c| {
                let mut words = c.split(' ');
                let label = words.next().unwrap().to_string();
                let value: f64 = words.next().unwrap().parse().unwrap();
                let source = words.next().unwrap_or("").to_string();
                (label, (value, source))
            })
            .collect();
        found.insert(pair.to_string(), (meets.to_string(), values));
    }
    found
}

/// A pair, where it meets, and its stiffness, restitution, friction and tangential ratio
/// with their sources.
type Expected = (&'static str, &'static str, [(f64, &'static str); 4]);

#[test]
fn check_prints_the_mixed_coefficients_of_every_pair_that_can_meet() {
    let dir = std::env::temp_dir().join(format!("talus-pairs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mixed.ron");
    std::fs::write(&file, MIXED).unwrap();
    let out = talus(&["check", file.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let found = pairs(&stdout);
    // By hand: stiffness mixes as springs in series 2ab/(a+b), friction and restitution as
    // √(ab), the tangential ratio as (a+b)/2; a material without a value takes the law's
    // (quartz's restitution 0.5; everyone's tangential ratio 2/7 but steel's); the
    // glass–steel friction is the pair's own. A wall without a material meets a grain as
    // the grain's own material does.
    let harmonic = |a: f64, b: f64| 2.0 * a * b / (a + b);
    let ratio = 2.0 / 7.0;
    let mixed = "(mixed)";
    let expected: [Expected; 5] = [
        (
            "quartz–quartz",
            "grains; walls side",
            [
                (1e6, "(material)"),
                (0.5, ""),
                (0.6, "(material)"),
                (ratio, ""),
            ],
        ),
        (
            "quartz–glass",
            "grains",
            [
                (harmonic(1e6, 4e6), mixed),
                ((0.5f64 * 0.8).sqrt(), mixed),
                ((0.6f64 * 0.3).sqrt(), mixed),
                (ratio, ""),
            ],
        ),
        (
            "quartz–steel",
            "walls floor",
            [
                (harmonic(1e6, 2e7), mixed),
                ((0.5f64 * 0.9).sqrt(), mixed),
                ((0.6f64 * 0.2).sqrt(), mixed),
                ((ratio + 0.4) / 2.0, mixed),
            ],
        ),
        (
            "glass–glass",
            "grains; walls side",
            [
                (4e6, "(material)"),
                (0.8, "(material)"),
                (0.3, "(material)"),
                (ratio, ""),
            ],
        ),
        (
            "glass–steel",
            "walls floor",
            [
                (harmonic(4e6, 2e7), mixed),
                ((0.8f64 * 0.9).sqrt(), mixed),
                (0.15, "(pair)"),
                ((ratio + 0.4) / 2.0, mixed),
            ],
        ),
    ];
    assert_eq!(found.len(), expected.len(), "{stdout}");
    for (pair, meets, values) in expected {
        let (listed_meets, listed) = found
            .get(pair)
            .unwrap_or_else(|| panic!("no {pair} in {stdout}"));
        assert_eq!(listed_meets, meets, "{pair}");
        assert_eq!(listed.len(), 4, "{pair}: {listed:?}");
        for (name, (value, source)) in ["stiffness", "restitution", "friction", "tangential_ratio"]
            .iter()
            .zip(values)
        {
            let (printed, printed_source) = &listed[*name];
            // Printed to six significant digits.
            assert!(
                (printed - value).abs() <= 5e-6 * value,
                "{pair} {name}: printed {printed}, by hand {value}"
            );
            assert_eq!(printed_source, source, "{pair} {name}");
        }
    }
}
