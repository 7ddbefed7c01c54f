//! The chute flow, short: grains flowing down a rough incline periodic in x and y stay in
//! the box while their unwrapped travel matches the time integral of their mean velocity;
//! the velocity grows from the base to the surface in the Bagnold-like shape the summary
//! fits; a run resumed from a checkpoint ends bit-identical; the frames show every grain in
//! the box, whole; periodic axes and inclines that cannot work are refused.

use std::path::{Path, PathBuf};

use serde_json::Value;
use talus_scenario::Runner;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::schema::Scenario;
use talus_scenario::validate::validate;
use talus_sim::force::ForceModelRegistry;

mod common;

use common::{SHORT_CHUTE, assert_chute_flow};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-chute-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn chute(overrides: &[&str]) -> (PathBuf, Scenario) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/chute_flow.ron");
    let all: Vec<String> = SHORT_CHUTE
        .iter()
        .chain(overrides)
        .map(ToString::to_string)
        .collect();
    (
        file.clone(),
        apply_overrides(&read(&file).unwrap(), &all).unwrap(),
    )
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// Time and mean velocity columns of the time series.
fn mean_velocity(out: &Path) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| h.starts_with(name)).unwrap();
    let (t, v) = (column("time"), column("chute_mean_velocity"));
    lines
        .map(|l| {
            let cells: Vec<f64> = l.split(',').map(|c| c.parse().unwrap()).collect();
            (cells[t], cells[v])
        })
        .collect()
}

#[test]
fn grains_flow_down_the_periodic_chute_in_a_bagnold_like_profile() {
    let (file, scenario) = chute(&[]);
    let registry = ForceModelRegistry::default();
    let out = scratch("flow");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &out).unwrap();
    let world = &runner.exp.world;
    let start: Vec<f64> = world
        .grains()
        .map(|id| world.grain(id).unwrap().unwrapped_position.x)
        .collect();
    runner.run(None, &mut |_| {}).unwrap();
    let world = &runner.exp.world;
    assert_eq!(
        world.grain_count(),
        150,
        "no grain is lost across the faces"
    );
    let mut wrapped = 0;
    let mut travel = 0.0;
    for (id, x0) in world.grains().zip(&start) {
        let g = world.grain(id).unwrap();
        let p = g.pose.position;
        assert!(
            (0.0..0.05).contains(&p.x) && (0.0..0.04).contains(&p.y),
            "{p} in the box"
        );
        wrapped += usize::from(g.image[0] > 0);
        travel += g.unwrapped_position.x - x0;
    }
    travel /= 150.0;
    // The mean travel down the incline is the time integral of the mean velocity.
    let v = mean_velocity(&out);
    let integral: f64 = v
        .windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0))
        .sum();
    assert!(
        wrapped > 75 && travel > 0.1,
        "{wrapped} grains wrapped, mean travel {travel} m"
    );
    assert!(
        (travel - integral).abs() < 0.02 * travel,
        "mean travel {travel} m, ∫ū dt = {integral} m"
    );

    // The flow's depth and its Bagnold-like profile, as with Gear (tests/gear.rs).
    assert_chute_flow(&summary(&out), &out);
    // The page of the run shows the fit with its uncertainties and links the profile.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("href=\"chute_profile.csv\""));
    for key in ["bagnold.amplitude_A", "bagnold.slip_velocity_m_s"] {
        let row = html
            .split("<tr>")
            .find(|row| row.contains(&format!("<td>{key}</td>")))
            .unwrap_or_else(|| panic!("no row of {key}"));
        assert!(row.contains(" ± "), "{row}");
    }
    assert!(html.contains("<td>bagnold.r_squared</td>"));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn a_chute_resumed_from_a_checkpoint_ends_bit_identical() {
    let (file, scenario) = chute(&["time.end=0.5", "measurements[0].window=(0.3, 0.5)"]);
    let registry = ForceModelRegistry::default();
    let whole = scratch("whole");
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &whole).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let expected = (
        std::fs::read(whole.join("timeseries.csv")).unwrap(),
        postcard::to_stdvec(&runner.exp.world.snapshot().grains).unwrap(),
        std::fs::read(whole.join("chute_profile.csv")).unwrap(),
    );
    drop(runner);
    let resumed = scratch("resumed");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &resumed).unwrap();
    runner.run(Some(4_321), &mut |_| {}).unwrap();
    runner.checkpoint().unwrap();
    drop(runner);
    let mut runner = Runner::resume(&resumed, &registry, 2).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let images = runner
        .exp
        .world
        .grains()
        .filter(|&id| runner.exp.world.grain(id).unwrap().image != [0; 3])
        .count();
    assert!(images > 0, "grains crossed the faces");
    let got = (
        std::fs::read(resumed.join("timeseries.csv")).unwrap(),
        postcard::to_stdvec(&runner.exp.world.snapshot().grains).unwrap(),
        std::fs::read(resumed.join("chute_profile.csv")).unwrap(),
    );
    assert!(got.0 == expected.0, "the time series differ");
    assert!(got.1 == expected.1, "the final grains differ");
    assert!(got.2 == expected.2, "the profiles differ");
    for dir in [whole, resumed] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_bed_at_rest_on_a_steepening_incline_starts_to_flow_past_where_it_stopped() {
    // The bed settles at 20° (where it stops), then the incline steepens at 25°/s to 40°.
    let (file, mut scenario) = chute(&[
        "incline_deg=20",
        "time.end=1.8",
        "measurements[0].window=(1.6, 1.8)",
    ]);
    scenario.incline_ramp = Some(talus_scenario::schema::InclineRamp {
        from: 0.6,
        rate_deg_per_s: 25.0,
        to_deg: 40.0,
    });
    assert!(validate(&scenario, &file).is_empty());
    let registry = ForceModelRegistry::default();
    let out = scratch("ramp");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &out).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let s = summary(&out);
    let v = mean_velocity(&out);
    // At rest before the ramp: the bed stopped at 20°.
    let before = v.iter().rev().find(|p| p.0 <= 0.6).unwrap().1;
    let start = s["theta_start_deg"]
        .as_f64()
        .expect("the bed started to flow");
    let when = s["flow_start_time_s"].as_f64().unwrap();
    assert!(before.abs() < 0.005, "{before} m/s at 20° before the ramp");
    // The incline at the start is the ramp's at that time, past where the bed stopped.
    assert!((start - (20.0 + 25.0 * (when - 0.6)).min(40.0)).abs() < 1e-9);
    assert!(start > 20.0 && start < 40.0, "θ_start = {start}°");
    // It flows from then on: the mean velocity at the end well above the threshold.
    assert!(v.last().unwrap().1 > 0.05, "{:?}", v.last());
    // The ramp is a function of time: gravity in the last step is the incline's at its
    // start.
    let world = &runner.exp.world;
    let (g, last) = (world.params().gravity, world.time() - world.params().dt);
    let expected = (20.0 + 25.0 * (last - 0.6)).min(40.0);
    assert!(
        (g.x.atan2(-g.z).to_degrees() - expected).abs() < 1e-9,
        "{g}"
    );
    let _ = std::fs::remove_dir_all(out);
}

/// The arrays of a `.vtu` file by name (each name once in the files talus writes, apart
/// from the velocities), decoded from VTK's inline binary: base64 of a `UInt64` byte count
/// and the little-endian values, as f64 whatever their type.
fn vtu_arrays(path: &Path) -> std::collections::HashMap<String, Vec<f64>> {
    use base64::Engine as _;
    use quick_xml::events::Event;
    let text = std::fs::read_to_string(path).unwrap();
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut arrays = std::collections::HashMap::new();
    let mut current: Option<(String, String)> = None;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == b"DataArray" => {
                let attribute = |key: &[u8]| {
                    e.attributes()
                        .map(Result::unwrap)
                        .find(|a| a.key.as_ref() == key)
                        .map(|a| a.unescape_value().unwrap().into_owned())
                        .unwrap()
                };
                current = Some((attribute(b"Name"), attribute(b"type")));
            }
            Event::Text(t) => {
                if let Some((name, kind)) = current.take() {
                    let raw = base64::engine::general_purpose::STANDARD
                        .decode(std::str::from_utf8(&t).unwrap().trim())
                        .unwrap();
                    let count = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
                    let bytes = &raw[8..];
                    assert_eq!(count, bytes.len(), "{name}: byte count");
                    let values: Vec<f64> = match kind.as_str() {
                        "Float64" => bytes
                            .chunks_exact(8)
                            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                            .collect(),
                        "Int64" => bytes
                            .chunks_exact(8)
                            .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
                            .collect(),
                        "UInt32" => bytes
                            .chunks_exact(4)
                            .map(|c| f64::from(u32::from_le_bytes(c.try_into().unwrap())))
                            .collect(),
                        "UInt8" => bytes.iter().map(|&b| f64::from(b)).collect(),
                        _ => continue,
                    };
                    arrays.insert(name, values);
                }
            }
            Event::End(e) if e.name().as_ref() == b"DataArray" => current = None,
            Event::Eof => break,
            _ => {}
        }
    }
    arrays
}

#[test]
fn frames_of_the_periodic_chute_show_every_grain_inside_the_box() {
    // Grains falling onto the incline and flowing down it cross the face x = 0.05 within a
    // few tenths of a second; a frame every 0.05 s.
    let (file, scenario) = chute(&[
        "grains[0].count=40",
        "time.end=0.3",
        "time.checkpoint_interval=None",
        "measurements[0].window=(0.1, 0.3)",
        "outputs.frame_interval=0.05",
    ]);
    let (period_x, period_y) = (0.05, 0.04);
    let registry = ForceModelRegistry::default();
    let out = scratch("frames");
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &out).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let world = &runner.exp.world;
    let grains: Vec<_> = world.grains().map(|id| world.grain(id).unwrap()).collect();
    assert!(
        grains.iter().any(|g| g.image[0] != 0),
        "a grain crossed the face x = {period_x}"
    );
    // The largest distance of a vertex from its grain's centre.
    let reach = grains
        .iter()
        .flat_map(|g| {
            world
                .shapes()
                .get(g.shape)
                .unwrap()
                .body
                .vertices()
                .to_vec()
        })
        .map(|v| v.length())
        .fold(0.0, f64::max);

    let mut frames: Vec<PathBuf> = std::fs::read_dir(out.join("frames"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("grains_")
        })
        .collect();
    frames.sort();
    assert_eq!(frames.len(), 7, "{frames:?}");
    let mut straddling = 0;
    for frame in &frames {
        let a = vtu_arrays(frame);
        let (points, connectivity, offsets) = (&a["Points"], &a["connectivity"], &a["offsets"]);
        let centres = &a["position"];
        assert_eq!(offsets.len(), 40, "{frame:?}: one cell per grain");
        let mut start = 0;
        for (cell, &end) in offsets.iter().enumerate() {
            let centre = &centres[3 * cell..3 * cell + 3];
            // The centre of mass in the box along both periodic axes.
            assert!(
                (0.0..=period_x).contains(&centre[0]) && (0.0..=period_y).contains(&centre[1]),
                "{frame:?}: cell {cell} centred at {centre:?}"
            );
            // The whole grain drawn around it, not split across the box: every vertex
            // within the grain's reach of its centre, so within the box grown by it.
            let mut outside = false;
            for &id in &connectivity[start..end as usize] {
                let p = &points[3 * id as usize..3 * id as usize + 3];
                let distance = (0..3)
                    .map(|k| (p[k] - centre[k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(
                    distance <= reach * (1.0 + 1e-9),
                    "{frame:?}: cell {cell}, {p:?}"
                );
                outside |= p[0] < 0.0 || p[0] > period_x || p[1] < 0.0 || p[1] > period_y;
            }
            straddling += usize::from(outside);
            start = end as usize;
        }
    }
    // Grains lying across a face are drawn whole on the side of their centre.
    assert!(straddling > 0);

    // The last frame, at the end of the run: each grain's cell is its shape posed at its
    // unwrapped position brought back into the box by whole periods.
    let last = vtu_arrays(frames.last().unwrap());
    assert!((last["TimeValue"][0] - world.time()).abs() < 1e-9);
    let mut start = 0;
    for (cell, &end) in last["offsets"].iter().enumerate() {
        let id = last["grain_id"][cell] as u32;
        let g = grains.iter().find(|g| g.id.0 == id).unwrap();
        let u = g.unwrapped_position;
        let in_box =
            talus_geom::glam::DVec3::new(u.x.rem_euclid(period_x), u.y.rem_euclid(period_y), u.z);
        let body = &world.shapes().get(g.shape).unwrap().body;
        let ids = &last["connectivity"][start..end as usize];
        assert_eq!(ids.len(), body.vertices().len());
        for (&id, v) in ids.iter().zip(body.vertices()) {
            let expected = in_box + g.pose.rotation * *v;
            let p = &last["Points"][3 * id as usize..3 * id as usize + 3];
            for k in 0..3 {
                assert!(
                    (p[k] - expected[k]).abs() < 1e-9,
                    "grain {id}: {p:?} vs {expected}"
                );
            }
        }
        start = end as usize;
    }
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn periodic_axes_and_inclines_that_cannot_work_are_refused() {
    let errors = |overrides: &[&str]| -> Vec<String> {
        let (file, scenario) = chute(overrides);
        let messages: Vec<String> = validate(&scenario, &file)
            .iter()
            .map(ToString::to_string)
            .collect();
        // A string continued on the next source line without its backslash keeps the
        // indentation as a run of spaces inside the message.
        for m in &messages {
            assert!(!m.contains("  "), "{overrides:?}: a run of spaces in {m:?}");
        }
        messages
    };
    let has = |overrides: &[&str], field: &str, words: &str| {
        let e = errors(overrides);
        assert!(
            e.iter().any(|m| m.contains(field) && m.contains(words)),
            "{overrides:?}: {e:?}"
        );
    };
    assert!(errors(&[]).is_empty(), "{:?}", errors(&[]));
    has(
        &["periodic.x=(0.05, 0.0)"],
        "periodic.x",
        "upper above the lower",
    );
    has(
        &["periodic.y=(0.0, 0.01)"],
        "periodic.y",
        "twice the largest grain",
    );
    has(&["periodic.z=(0.0, 1.0)"], "periodic.z", "gravity");
    has(&["periodic.x=None"], "periodic", "periodic axes x");
    has(&["incline_deg=90"], "incline_deg", "below 90°");
    has(
        &["gravity=(1.0, 0.0, -9.81)"],
        "gravity",
        "vertical gravity",
    );
    has(
        &["incline_ramp=(0.5, 10.0, 30.0)"],
        "incline_ramp.to_deg",
        "steeper than incline_deg",
    );
    has(
        &["incline_ramp=(0.5, -1.0, 40.0)"],
        "incline_ramp.rate_deg_per_s",
        "",
    );
    // A side wall across the periodic y axis.
    let (file, mut scenario) = chute(&[]);
    scenario.walls.push(talus_scenario::schema::WallSpec {
        name: "side".into(),
        shape: talus_scenario::schema::WallShape::Plane {
            point: (0.0, 0.0, 0.0),
            normal: (0.0, 1.0, 0.0),
        },
        motion: Default::default(),
        removed_at: None,
        material: None,
    });
    let e: Vec<String> = validate(&scenario, &file)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        e.iter()
            .any(|m| m.contains("walls[1].shape.normal") && m.contains("periodic axis y")),
        "{e:?}"
    );
}
