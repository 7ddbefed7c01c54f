//! End-to-end tests of `talus shape`: the binary is run as a child process.

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `talus shape` with `args`.
fn talus_shape(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("shape")
        .args(args)
        .output()
        .expect("the talus binary runs")
}

/// Runs `talus shape` with `args` and `--json`, checks success and parses the JSON object.
fn shape_json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = talus_shape(&args);
    assert!(
        out.status.success(),
        "talus shape {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "unexpected stderr: {:?}", out.stderr);
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON value")
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn count(json: &Value, key: &str) -> i64 {
    json[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key} is not an integer in {json}"))
}

fn vector(v: &Value) -> [f64; 3] {
    let a = v
        .as_array()
        .unwrap_or_else(|| panic!("{v} is not an array"));
    assert_eq!(a.len(), 3, "{v}");
    [float(&a[0]), float(&a[1]), float(&a[2])]
}

fn matrix(v: &Value) -> [[f64; 3]; 3] {
    let a = v
        .as_array()
        .unwrap_or_else(|| panic!("{v} is not an array"));
    assert_eq!(a.len(), 3, "{v}");
    [vector(&a[0]), vector(&a[1]), vector(&a[2])]
}

fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= 1e-12 * expected.abs().max(1.0),
        "{what}: {actual} != {expected}"
    );
}

/// Checks a platonic solid of edge `edge` and density `density` against its analytic volume
/// `volume` and isotropic moment of inertia `moment`.
fn check_platonic(name: &str, edge: f64, density: f64, counts: [i64; 3], volume: f64, moment: f64) {
    let json = shape_json(&[
        "--solid",
        name,
        "--size",
        &edge.to_string(),
        "--density",
        &density.to_string(),
    ]);
    assert!(json.is_object(), "{json}");
    let actual_counts = [
        count(&json, "vertices"),
        count(&json, "edges"),
        count(&json, "faces"),
    ];
    assert_eq!(actual_counts, counts, "{name} counts");
    assert_close(float(&json["volume"]), volume, &format!("{name} volume"));
    assert_close(
        float(&json["mass"]),
        density * volume,
        &format!("{name} mass"),
    );
    for c in vector(&json["center_of_mass"]) {
        assert_close(c, 0.0, &format!("{name} centre of mass"));
    }
    let inertia = matrix(&json["inertia"]);
    for (i, row) in inertia.iter().enumerate() {
        for (j, &entry) in row.iter().enumerate() {
            let expected = if i == j { moment } else { 0.0 };
            assert_close(entry, expected, &format!("{name} inertia[{i}][{j}]"));
        }
    }
    for m in vector(&json["principal_moments"]) {
        assert_close(m, moment, &format!("{name} principal moment"));
    }
}

#[test]
fn cube_matches_analytic_values() {
    // V = a³ = 8, m = 24, I = m a²/6 = 16.
    check_platonic("cube", 2.0, 3.0, [8, 12, 6], 8.0, 16.0);
}

#[test]
fn tetrahedron_matches_analytic_values() {
    let (a, rho) = (2.0_f64, 3.0);
    let volume = a.powi(3) / (6.0 * 2f64.sqrt());
    let moment = rho * volume * a * a / 20.0;
    check_platonic("tetrahedron", a, rho, [4, 6, 4], volume, moment);
}

#[test]
fn icosahedron_matches_analytic_values() {
    let (a, rho) = (2.0_f64, 3.0);
    let s5 = 5f64.sqrt();
    let volume = 5.0 * (3.0 + s5) * a.powi(3) / 12.0;
    let moment = rho * volume * a * a * (3.0 + s5) / 20.0;
    check_platonic("icosahedron", a, rho, [12, 30, 20], volume, moment);
}

#[test]
fn json_has_the_documented_keys() {
    let json = shape_json(&["--solid", "octahedron", "--size", "1"]);
    for key in [
        "shape",
        "density",
        "vertices",
        "edges",
        "faces",
        "volume",
        "mass",
        "center_of_mass",
        "inertia",
        "principal_moments",
        "principal_axes",
    ] {
        assert!(json.get(key).is_some(), "{key} missing in {json}");
    }
    assert_eq!(json["shape"], "octahedron edge 1");
    assert_eq!(float(&json["density"]), 1.0);
    // The principal axes form a rotation: orthonormal rows.
    let axes = matrix(&json["principal_axes"]);
    for i in 0..3 {
        for j in 0..3 {
            let dot: f64 = (0..3).map(|k| axes[i][k] * axes[j][k]).sum();
            assert_close(dot, if i == j { 1.0 } else { 0.0 }, "axes orthonormal");
        }
    }
}

#[test]
fn ellipsoid_grain_is_reproducible_and_plausible() {
    let args = [
        "--ellipsoid",
        "1,0.8,0.6",
        "--vertices",
        "18",
        "--seed",
        "7",
        "--json",
    ];
    let first = talus_shape(&args);
    let second = talus_shape(&args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(first.stdout, second.stdout, "same seed, different output");

    let json: Value = serde_json::from_slice(&first.stdout).expect("one JSON value");
    assert_eq!(count(&json, "vertices"), 18);
    let euler = count(&json, "vertices") - count(&json, "edges") + count(&json, "faces");
    assert_eq!(euler, 2);
    let volume = float(&json["volume"]);
    let ellipsoid_volume = 4.0 / 3.0 * std::f64::consts::PI * 1.0 * 0.8 * 0.6;
    assert!(
        volume > 0.0 && volume < ellipsoid_volume,
        "volume {volume} not in (0, {ellipsoid_volume})"
    );
    assert_eq!(json["shape"], "ellipsoid 1,0.8,0.6 K=18 seed=7");

    // Another seed gives another grain; no --seed means seed 0.
    let other = shape_json(&[
        "--ellipsoid",
        "1,0.8,0.6",
        "--vertices",
        "18",
        "--seed",
        "8",
    ]);
    assert_ne!(other["volume"], json["volume"]);
    let default = shape_json(&["--ellipsoid", "1,0.8,0.6", "--vertices", "18"]);
    let zero = shape_json(&[
        "--ellipsoid",
        "1,0.8,0.6",
        "--vertices",
        "18",
        "--seed",
        "0",
    ]);
    assert_eq!(default, zero);
}

#[test]
fn human_summary_has_aligned_labels() {
    let out = talus_shape(&["--solid", "cube", "--size", "2", "--density", "3"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    for (label, value) in [
        ("vertices", "8"),
        ("edges", "12"),
        ("faces", "6"),
        ("V - E + F", "2"),
        ("volume", "8"),
        ("mass", "24"),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(label) && l[label.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no line for {label} in\n{text}"));
        assert_eq!(line[label.len()..].trim(), value, "line {line:?}");
    }
    for label in [
        "centre of mass",
        "inertia",
        "principal moments",
        "principal axes",
    ] {
        assert!(text.contains(label), "{label} missing in\n{text}");
    }
    // The value column starts where the value of "vertices" starts; every line has its
    // label (or nothing) left of it and something right of it.
    let vertices_line = text
        .lines()
        .find(|l| l.starts_with("vertices"))
        .expect("a vertices line");
    let column = vertices_line.len() - vertices_line["vertices".len()..].trim_start().len();
    assert!(column > "principal moments".len(), "value column {column}");
    for line in text.lines() {
        assert!(
            line.len() > column && line.is_char_boundary(column),
            "line {line:?} too short"
        );
        let label = line[..column].trim_end();
        assert!(
            line[label.len()..column].chars().all(|c| c == ' ') && label.len() + 2 <= column,
            "line {line:?} not aligned at column {column}:\n{text}"
        );
        assert!(
            !line[column..].trim().is_empty(),
            "line {line:?} has no value"
        );
    }
}

#[test]
fn bad_invocations_fail_with_a_message() {
    // (arguments, text the error message must contain)
    let cases: &[(&[&str], &str)] = &[
        (&[], "--ellipsoid"),
        (
            &[
                "--ellipsoid",
                "1,1,1",
                "--vertices",
                "8",
                "--solid",
                "cube",
                "--size",
                "1",
            ],
            "cannot be used with",
        ),
        (&["--ellipsoid", "1,1,1", "--vertices", "3"], "--vertices"),
        (&["--ellipsoid", "1,1,1", "--vertices", "abc"], "abc"),
        (
            &[
                "--ellipsoid",
                "1,1,1",
                "--vertices",
                "99999999999999999999999",
            ],
            "--vertices",
        ),
        (&["--ellipsoid", "1,1,1", "--vertices", "10001"], "10000"),
        (&["--ellipsoid", "1,1,1"], "--vertices"),
        (&["--ellipsoid", "1,2", "--vertices", "8"], "--ellipsoid"),
        (&["--ellipsoid", "1,-2,3", "--vertices", "8"], "-2"),
        (&["--ellipsoid", "-1,2,3", "--vertices", "8"], "-1"),
        (&["--ellipsoid", "nan,1,1", "--vertices", "8"], "nan"),
        (&["--ellipsoid", "inf,1,1", "--vertices", "8"], "inf"),
        (&["--ellipsoid", "a,b,c", "--vertices", "8"], "'a'"),
        (
            &["--ellipsoid", "1,1,1", "--vertices", "8", "--seed", "-1"],
            "--seed",
        ),
        (&["--ellipsoid", "1,1,5000", "--vertices", "8"], "semi"),
        (&["--solid", "sphere", "--size", "1"], "sphere"),
        (&["--solid", "sphere", "--size", "1"], "icosahedron"),
        (&["--solid", "cube"], "--size"),
        (&["--solid", "cube", "--size", "0"], "--size"),
        (&["--solid", "cube", "--size", "-1"], "--size"),
        (&["--solid", "cube", "--size", "inf"], "--size"),
        (&["--solid", "cube", "--size", "1e300"], "coordinates"),
        (
            &["--solid", "cube", "--size", "1", "--density", "0"],
            "--density",
        ),
        (
            &["--solid", "cube", "--size", "1", "--density", "nan"],
            "--density",
        ),
        (
            &["--solid", "cube", "--size", "1", "--density", "-3"],
            "--density",
        ),
        (
            &["--solid", "cube", "--size", "1e40", "--density", "1e300"],
            "floating-point range",
        ),
        (
            &["--solid", "cube", "--size", "1e-30", "--density", "1e-300"],
            "floating-point range",
        ),
        (
            &["--solid", "cube", "--size", "1", "--vertices", "8"],
            "--vertices",
        ),
        (&["--solid", "cube", "--size", "1", "--seed", "1"], "--seed"),
        (&["--vertices", "8"], "--ellipsoid"),
        (
            &["--ellipsoid", "1,1,1", "--vertices", "8", "--size", "1"],
            "--size",
        ),
    ];
    for (args, expected) in cases {
        let out = talus_shape(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "talus shape {args:?} succeeded:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "talus shape {args:?} exited with {:?}",
            out.status
        );
        assert!(
            stderr.starts_with("error: "),
            "talus shape {args:?}: {stderr}"
        );
        assert!(
            stderr.contains(expected),
            "talus shape {args:?}: stderr does not mention {expected:?}:\n{stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "talus shape {args:?} panicked:\n{stderr}"
        );
        assert!(
            out.stdout.is_empty(),
            "talus shape {args:?} wrote to stdout"
        );
    }
}

#[test]
fn argument_errors_exit_2_and_library_errors_exit_1() {
    let parse_error = talus_shape(&["--solid", "cube", "--size", "0"]);
    assert_eq!(parse_error.status.code(), Some(2));
    let library_error = talus_shape(&["--ellipsoid", "1,1,5000", "--vertices", "8"]);
    assert_eq!(library_error.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&library_error.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
}

#[test]
fn help_describes_every_flag() {
    let out = talus_shape(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--ellipsoid",
        "--vertices",
        "--seed",
        "--solid",
        "--size",
        "--density",
        "--json",
    ] {
        assert!(help.contains(flag), "{flag} missing in\n{help}");
    }

    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("--help")
        .output()
        .expect("the talus binary runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("shape"), "{help}");
    assert!(help.contains("polyhedral grains"), "{help}");
}
