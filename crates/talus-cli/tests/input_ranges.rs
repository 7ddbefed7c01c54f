//! Hostile input through the command line: every physical input has a range checked before
//! the run, each refusal names its field (and the `--set` that gave the value), numbers in
//! messages stay short, a byte-order mark is no syntax error, control characters never
//! reach the terminal raw, and a blow-up names what drove it.

mod common;

use common::{talus, text};

use std::path::{Path, PathBuf};

fn config(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../configs/{name}.ron"))
        .to_str()
        .unwrap()
        .to_string()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-ranges-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The longest run of digits in `text`: a number printed in full (`1e308` as 309 digits)
/// shows up as a long one.
fn longest_digit_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// `talus check` and `talus run` of `config` with `sets`: both refuse, exit 1, without a
/// panic or an output directory, with every fragment in the message, blamed on the
/// `--set`, and with short numbers.
fn assert_refused(config_name: &str, sets: &[&str], fragments: &[&str]) {
    let file = config(config_name);
    let dir = scratch(&format!("refused-{config_name}"));
    let out_dir = dir.join("out");
    for command in ["check", "run"] {
        let mut args = vec![command, file.as_str()];
        for s in sets {
            args.extend(["--set", s]);
        }
        if command == "run" {
            args.extend(["--out", out_dir.to_str().unwrap(), "--quiet"]);
        }
        let out = talus(&args);
        let stderr = text(&out.stderr);
        let what = format!("talus {command} {config_name} {sets:?}");
        assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        for fragment in fragments {
            assert!(
                stderr.contains(fragment),
                "{what}: '{fragment}' in {stderr}"
            );
        }
        assert!(
            stderr.starts_with("error: --set "),
            "{what}: not blamed on the --set: {stderr}"
        );
        assert!(
            longest_digit_run(&stderr) <= 12,
            "{what}: a number printed in full: {stderr}"
        );
        assert!(!out_dir.exists(), "{what}: an output directory was made");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn oscillations_beyond_what_a_time_step_follows_are_refused() {
    // Amplitude and frequency of 1e300 once reported an intruder rise of 3.4e301.
    assert_refused(
        "vibrating_box",
        &[
            "walls[0].motion.amplitude=1e300",
            "walls[0].motion.frequency=1e300",
        ],
        &[
            "walls[0].motion.amplitude",
            "walls[0].motion.frequency",
            "20 time steps per period",
        ],
    );
    // The box at a step of 1.4e-5 s (and a stiffness that step follows), whatever the
    // shipped file's: 12.5 kHz is 5.71 steps per period.
    let (dt, stiffness) = ("time.dt=1.4e-5", "force_model.coefficients.stiffness=4e6");
    assert_refused(
        "vibrating_box",
        &[dt, stiffness, "walls[0].motion.frequency=12500"],
        &["5.71429 steps", "20 time steps per period"],
    );
    // A 1 m stroke at 10 Hz moves the floor by 0.88 mm per step: more than a tenth of a
    // bead.
    assert_refused(
        "vibrating_box",
        &[dt, stiffness, "walls[0].motion.amplitude=1.0"],
        &["walls[0].motion.amplitude", "0.1 grain diameter per step"],
    );
    assert_refused(
        "rotating_drum",
        &["walls[0].motion.angular_velocity=1e6"],
        &["walls[0].motion.angular_velocity", "per turn"],
    );
}

#[test]
fn geometry_that_cannot_hold_its_grains_is_refused() {
    // An orifice wider than the bin the grains start in: they all fall through.
    assert_refused(
        "hopper",
        &["walls[0].shape.orifice=1.0"],
        &["walls[0].shape.orifice", "fall through"],
    );
    assert_refused(
        "hopper",
        &["walls[0].shape.wall_angle_deg=1e-4"],
        &["walls[0].shape.wall_angle_deg", "1° to 89°"],
    );
    // An intruder is one grain, not a population of 360.
    assert_refused(
        "vibrating_box",
        &["measurements[0].intruder=beads"],
        &[
            "measurements[0].intruder",
            "360 grains",
            "exactly one grain",
        ],
    );
    // A stroboscope's phase is an angle of the drive's cycle.
    assert_refused(
        "vibrating_box",
        &["measurements[0].strobe_phase_deg=360"],
        &["measurements[0].strobe_phase_deg", "0 to 360 degrees"],
    );
}

#[test]
fn grains_materials_and_gravity_have_physical_ranges() {
    for (sets, fragments) in [
        (
            &["grains[0].semi_axes=(1e200, 1e200, 1e200)"][..],
            &["grains[0].semi_axes", "1e200", "10^-6 m to 100 m"][..],
        ),
        (
            &["grains[0].semi_axes=(1e-200, 1e-200, 1e-200)"],
            &["grains[0].semi_axes", "1e-200"],
        ),
        (
            &["grains[0].semi_axes=(0.05, 0.0005, 0.0005)"],
            &["grains[0].semi_axes", "50 times the shortest"],
        ),
        (
            &["materials[0].density=1e308"],
            &["materials[0].density", "1e308 kg/m³"],
        ),
        (&["gravity=(0, 0, -1e6)"], &["gravity", "1000 g"]),
        (&["margin=0.5"], &["margin", "smallest grain"]),
        (
            &["grains[0].velocity=(0, 0, -1e4)"],
            &["grains[0].velocity", "0.1 grain diameter per step"],
        ),
        (&["time.end=1e-320"], &["time.end", "e-321"]),
    ] {
        assert_refused("hopper", sets, fragments);
    }
}

#[test]
fn a_value_from_the_command_line_is_blamed_on_it_and_one_from_the_file_on_the_file() {
    let file = config("hopper");
    let out = talus(&["check", &file, "--set", "grains.0.count=0"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.starts_with("error: --set grains.0.count=0: grains[0].count: 0 grains"),
        "{stderr}"
    );
    assert!(!stderr.contains("hopper.ron"), "{stderr}");
    // The same value written in the file is the file's.
    let dir = scratch("blame");
    let copy = dir.join("hopper.ron");
    let shipped = std::fs::read_to_string(&file).unwrap();
    assert!(
        shipped.contains("count: 5000"),
        "the grains' count in {file}"
    );
    let scenario = shipped.replace("count: 5000", "count: 0");
    std::fs::write(&copy, scenario).unwrap();
    let out = talus(&["check", copy.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("error: {}: grains[0].count", copy.display())),
        "{stderr}"
    );
    // A bad --threads is the flag's, not the file's.
    let out = talus(&["check", &file, "--set", "time.dt=abc"]);
    assert!(text(&out.stderr).starts_with("error: --set time.dt=abc: "));
    let out = talus(&["run", &file, "--threads", "100000", "--out", "unused"]);
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: --threads 100000: "), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_byte_order_mark_is_no_syntax_error() {
    let dir = scratch("bom");
    let file = dir.join("hopper.ron");
    let mut bytes = vec![0xef, 0xbb, 0xbf];
    bytes.extend(std::fs::read(config("hopper")).unwrap());
    std::fs::write(&file, bytes).unwrap();
    let out = talus(&["check", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn control_characters_in_names_never_reach_the_terminal_raw() {
    // Renaming the intruder's population to a name with an escape sequence: refused, and
    // the messages that quote it (the measurement's intruder is no longer found) show it
    // escaped.
    let file = config("vibrating_box");
    for command in ["check", "run"] {
        let mut args = vec![
            command,
            &file,
            "--set",
            "grains[0].name=\"in\u{1b}[2Jtruder\u{9b}31m\"",
        ];
        if command == "run" {
            args.extend(["--out", "unused-out"]);
        }
        let out = talus(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains('\u{1b}') && !stderr.contains('\u{9b}'));
        assert!(stderr.contains("control characters"), "{stderr}");
        assert!(stderr.contains("in\\u{1b}[2Jtruder\\u{9b}31m"), "{stderr}");
    }
    assert!(!Path::new("unused-out").exists());
}

/// Eight grains above a floor, with `gravity` and a floor motion.
fn violent_scene(gravity: f64, stiffness: f64, motion: &str) -> String {
    format!(
        r#"Scenario(
    name: "violent",
    seed: 1,
    time: (dt: 2e-5, end: 0.05, output_interval: 0.01),
    gravity: (0.0, 0.0, {gravity}),
    materials: [(name: "m", density: 2500.0)],
    force_model: (name: "volumetric", coefficients: {{"stiffness": {stiffness}}}),
    grains: [(
        name: "stones", count: 8, vertices: 8, semi_axes: (0.005, 0.005, 0.005), material: "m",
        placement: Lattice(min: (0.0, 0.0, 0.006), max: (0.05, 0.05, 0.05)),
    )],
    walls: [(
        name: "shaker",
        shape: Box(min: (-0.01, -0.01, 0.0), max: (0.06, 0.06, 0.1), thickness: 0.01),
        motion: {motion},
    )],
)
"#
    )
}

#[test]
fn a_blow_up_names_the_gravity_or_the_wall_that_drove_it() {
    let dir = scratch("violent");
    for (name, scene, fragments) in [
        (
            "gravity",
            violent_scene(-8000.0, 1e6, "Fixed"),
            &["gravity is 8000 m/s²", "815.494 times the Earth's"][..],
        ),
        (
            "wall",
            violent_scene(
                -9.81,
                5e3,
                "Oscillate(direction: (0.0, 0.0, 1.0), amplitude: 0.001, frequency: 2000.0)",
            ),
            &[
                "wall 'shaker' oscillates at 2000 Hz",
                "16097.2 g",
                "gentler drive",
            ],
        ),
    ] {
        let file = dir.join(format!("{name}.ron"));
        std::fs::write(&file, scene).unwrap();
        let out_dir = dir.join(name);
        let out = talus(&[
            "run",
            file.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--quiet",
        ]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains("blew up"), "{name}: {stderr}");
        for fragment in fragments {
            assert!(
                stderr.contains(fragment),
                "{name}: '{fragment}' in {stderr}"
            );
        }
        // Not the time step: it is far from critical for the drive's own scale.
        assert!(!stderr.contains("Halve time.dt"), "{name}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_chute_profile_and_an_incline_ramp_have_bounds() {
    // Layers of a picometre would take all memory for a profile a few centimetres high.
    assert_refused(
        "chute_flow",
        &["measurements[0].bin=1e-12"],
        &["measurements[0].bin", "hundredth of the smallest grain"],
    );
    // An incline turned in an instant says nothing about where the flow starts.
    assert_refused(
        "chute_flow",
        &["incline_ramp=(0.1, 1e300, 40.0)"],
        &["incline_ramp.rate_deg_per_s", "at most 100"],
    );
}
