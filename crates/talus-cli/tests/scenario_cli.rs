//! `talus check`, `run`, `resume` and `models` from the command line: exit codes and
//! messages for good and bad input, and the blow-up report.

mod common;

use common::{talus, text};

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn shipped_configs_check_clean() {
    for name in [
        "angle_of_repose",
        "angle_of_repose_pour",
        "vibrating_box",
        "hopper",
        "hopper_pyramid",
        "max_stability_angle",
        "vibrating_conveyor",
    ] {
        let file = root().join(format!("configs/{name}.ron"));
        let out = talus(&["check", file.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("ok") && stdout.contains("critical"),
            "{stdout}"
        );
        let json = talus(&["check", file.to_str().unwrap(), "--json"]);
        let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert!(report["grains"].as_u64().unwrap() > 0);
        assert!(report["dt"].as_f64().unwrap() <= report["critical_dt"].as_f64().unwrap());
    }
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let broken = root().join("crates/talus-scenario/tests/broken");
    let cases: [(Vec<String>, &str); 6] = [
        (
            vec![
                "check".into(),
                broken.join("negative_dt.ron").display().to_string(),
            ],
            "time.dt",
        ),
        (
            vec![
                "check".into(),
                broken.join("syntax_error.ron").display().to_string(),
            ],
            "syntax_error.ron:7:",
        ),
        (
            vec!["run".into(), "/nonexistent/scenario.ron".into()],
            "/nonexistent/scenario.ron",
        ),
        (
            vec!["resume".into(), "/nonexistent/run".into()],
            "checkpoint.bin",
        ),
        (
            vec![
                "check".into(),
                root().join("configs/hopper.ron").display().to_string(),
                "--set".into(),
                "time.ned=1".into(),
            ],
            "no field 'ned'",
        ),
        (
            vec![
                "check".into(),
                root().join("configs/hopper.ron").display().to_string(),
                "--set".into(),
                "time.dt=-1".into(),
            ],
            "time.dt",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = talus(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(expected),
            "{args:?}: expected '{expected}' in {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn models_lists_the_built_in_force_models() {
    let out = talus(&["models"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    for name in [
        "volumetric",
        "volumetric_yade",
        "energy_conserving",
        "stiffness",
        "friction",
    ] {
        assert!(stdout.contains(name), "{stdout}");
    }
}

/// Grains thrown at a floor far faster than their soft contacts can stop within a sane
/// overlap.
const BLOW_UP: &str = r#"
Scenario(
    name: "blow_up",
    seed: 1,
    time: (dt: 2e-5, end: 0.2, output_interval: 0.01, checkpoint_interval: 0.005),
    gravity: (0.0, 0.0, -9.81),
    materials: [(name: "m", density: 2500.0)],
    force_model: (name: "volumetric", coefficients: {"stiffness": 2e3}),
    grains: [(
        name: "bullets", count: 8, vertices: 8, semi_axes: (0.005, 0.005, 0.005), material: "m",
        placement: Lattice(min: (0.0, 0.0, 0.03), max: (0.05, 0.05, 0.05)),
        velocity: (0.0, 0.0, -8.0),
    )],
    walls: [(name: "floor", shape: Plane(point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0)))],
)
"#;

#[test]
fn a_blow_up_stops_the_run_with_its_cause() {
    let dir = std::env::temp_dir().join(format!("talus-blowup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("blow_up.ron");
    std::fs::write(&file, BLOW_UP).unwrap();
    let out_dir = dir.join("out");
    let out = talus(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    for fragment in ["blew up", "grain 4", "too soft", "stiffness", "checkpoint"] {
        assert!(
            stderr.contains(fragment),
            "'{fragment}' missing in: {stderr}"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["status"], "blew_up");
    // A second run does not overwrite the first one's results unless told to.
    let again = talus(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("already holds a run"));
    let forced = talus(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--force",
        "--quiet",
    ]);
    assert!(text(&forced.stderr).contains("blew up"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn check_reports_what_the_hull_adds_to_each_file_shape() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/shapes_pile.ron");
    let out = talus(&["check", file]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}{}", stdout, text(&out.stderr));
    assert!(stdout.contains("file shapes"), "{stdout}");
    // The dented rock is not convex: its hull adds volume; the sand is a point cloud.
    let rock = stdout
        .lines()
        .find(|l| l.contains("rock.obj 'rock_a'"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(rock.contains("hull adds"), "{rock}");
    assert!(!rock.contains("hull adds 0 "), "{rock}");
    let sand = stdout
        .lines()
        .find(|l| l.contains("sand.xyz"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(sand.contains("input volume unknown"), "{sand}");
    // The same report as JSON.
    let out = talus(&["check", "--json", file]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shapes = json["file_shapes"].as_array().unwrap();
    assert_eq!(shapes.len(), 5);
    assert!(shapes[0]["added_volume"].as_f64().unwrap() > 0.0);
    assert!(shapes[4]["input_volume"].is_null());
}

#[test]
fn a_closed_pipe_ends_talus_quietly() {
    // `talus check F | head -1`: the reader goes before talus writes its report.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/hopper.ron");
    let mut child = std::process::Command::new(common::TALUS)
        .arg("check")
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}
