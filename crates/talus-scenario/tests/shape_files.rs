//! Grain shapes from files: a box and an L-shaped prism written by hand in every format
//! give the analytic volume, inertia and hull report through the population path; broken
//! files give errors naming the file and line; no input makes a reader panic; a resumed run
//! uses the shapes it started with.

use std::path::{Path, PathBuf};

use talus_geom::glam::DVec3;
use talus_scenario::build::build;
use talus_scenario::check::check;
use talus_scenario::load::parse;
use talus_scenario::shape_file;
use talus_scenario::{Runner, Scenario};
use talus_sim::force::ForceModelRegistry;

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("talus-shapes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scenario of one grain of `shape` (a RON `shape:` value) at rest, written into `dir`.
fn scenario(dir: &Path, shape: &str, count: usize) -> (Scenario, PathBuf) {
    let points: Vec<String> = (0..count)
        .map(|i| format!("({}.0, 0.0, 0.0)", 10 * i))
        .collect();
    let text = format!(
        r#"Scenario(
    name: "shapes", seed: 1,
    time: (dt: 1e-7, end: 1e-6, output_interval: 1e-7, checkpoint_interval: 5e-7),
    gravity: (0.0, 0.0, 0.0),
    materials: [(name: "m", density: 1.0)],
    force_model: (name: "volumetric", coefficients: {{"stiffness": 1e3}}),
    grains: [(name: "g", count: {count}, shape: {shape}, material: "m",
              placement: Points([{}]))],
    outputs: (plots: false),
)"#,
        points.join(", ")
    );
    let file = dir.join("scenario.ron");
    std::fs::write(&file, &text).unwrap();
    (parse(&text, &file).unwrap(), file)
}

/// A right prism over the counter-clockwise polygon `base` (in z = 0) of height `h`: its
/// corners and its outward faces (the two caps and a quad per side).
fn prism(base: &[(f64, f64)], h: f64) -> (Vec<DVec3>, Vec<Vec<usize>>) {
    let n = base.len();
    let mut points: Vec<DVec3> = base.iter().map(|&(x, y)| DVec3::new(x, y, 0.0)).collect();
    points.extend(base.iter().map(|&(x, y)| DVec3::new(x, y, h)));
    let mut faces = vec![(0..n).rev().collect::<Vec<_>>(), (n..2 * n).collect()];
    for i in 0..n {
        let j = (i + 1) % n;
        faces.push(vec![i, j, n + j, n + i]);
    }
    (points, faces)
}

/// The box 2 × 1 × 0.5.
fn box_2_1_half() -> (Vec<DVec3>, Vec<Vec<usize>>) {
    prism(&[(0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (0.0, 1.0)], 0.5)
}

/// Triangles of the faces, as fans (every face here is star-shaped from its first corner).
fn triangles(faces: &[Vec<usize>]) -> Vec<[usize; 3]> {
    faces
        .iter()
        .flat_map(|f| (1..f.len() - 1).map(move |k| [f[0], f[k], f[k + 1]]))
        .collect()
}

fn obj(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let mut s = String::from("# a solid\no solid\n");
    for p in points {
        s += &format!("v {} {} {}\n", p.x, p.y, p.z);
    }
    for f in faces {
        let corners: Vec<String> = f.iter().map(|i| (i + 1).to_string()).collect();
        s += &format!("f {}\n", corners.join(" "));
    }
    s.into_bytes()
}

fn stl_ascii(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let mut s = String::from("solid box\n");
    for t in triangles(faces) {
        s += "  facet normal 0 0 0\n    outer loop\n";
        for i in t {
            s += &format!(
                "      vertex {} {} {}\n",
                points[i].x, points[i].y, points[i].z
            );
        }
        s += "    endloop\n  endfacet\n";
    }
    s += "endsolid box\n";
    s.into_bytes()
}

fn stl_binary(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let t = triangles(faces);
    let mut b = vec![b' '; 80];
    b.extend_from_slice(&(t.len() as u32).to_le_bytes());
    for tri in t {
        for _ in 0..3 {
            b.extend_from_slice(&0f32.to_le_bytes());
        }
        for i in tri {
            for c in points[i].to_array() {
                b.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
        b.extend_from_slice(&[0, 0]);
    }
    b
}

fn ply_header(format: &str, points: usize, faces: usize) -> String {
    format!(
        "ply\nformat {format} 1.0\nelement vertex {points}\nproperty double x\n\
         property double y\nproperty double z\nelement face {faces}\n\
         property list uchar int vertex_indices\nend_header\n"
    )
}

fn ply_ascii(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let mut s = ply_header("ascii", points.len(), faces.len());
    for p in points {
        s += &format!("{} {} {}\n", p.x, p.y, p.z);
    }
    for f in faces {
        let corners: Vec<String> = f.iter().map(ToString::to_string).collect();
        s += &format!("{} {}\n", f.len(), corners.join(" "));
    }
    s.into_bytes()
}

fn ply_binary(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let mut b = ply_header("binary_little_endian", points.len(), faces.len()).into_bytes();
    for p in points {
        for c in p.to_array() {
            b.extend_from_slice(&c.to_le_bytes());
        }
    }
    for f in faces {
        b.push(f.len() as u8);
        for &i in f {
            b.extend_from_slice(&(i as i32).to_le_bytes());
        }
    }
    b
}

fn xyz(points: &[DVec3], _faces: &[Vec<usize>]) -> Vec<u8> {
    let mut s = String::from("x,y,z\n");
    for p in points {
        s += &format!("{}, {}, {}\n", p.x, p.y, p.z);
    }
    // A point inside is not a vertex of the hull.
    s += "1.0 0.5 0.25 # the centre\n";
    s.into_bytes()
}

type Writer = fn(&[DVec3], &[Vec<usize>]) -> Vec<u8>;

const FORMATS: [(&str, Writer); 6] = [
    ("box.obj", obj),
    ("box_ascii.stl", stl_ascii),
    ("box_binary.stl", stl_binary),
    ("box_ascii.ply", ply_ascii),
    ("box_binary.ply", ply_binary),
    ("box.XYZ", xyz),
];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn a_box_in_every_format_has_the_analytic_volume_and_inertia() {
    let d = dir("box");
    let (points, faces) = box_2_1_half();
    let registry = ForceModelRegistry::default();
    for (name, write) in FORMATS {
        std::fs::write(d.join(name), write(&points, &faces)).unwrap();
        let (s, file) = scenario(&d, &format!("File(path: \"{name}\", scale: KeepSize)"), 1);
        let exp = build(&s, &file, &registry, 1, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let shape = exp
            .world
            .shapes()
            .get(exp.populations[0].shapes[0])
            .unwrap();
        // V = abc; per unit density the principal moments are V(b² + c²)/12 and the others.
        let (a, b, c) = (2.0, 1.0, 0.5);
        let v = a * b * c;
        assert!(close(shape.volume, v), "{name}: volume {}", shape.volume);
        let want = [
            v * (b * b + c * c) / 12.0,
            v * (a * a + c * c) / 12.0,
            v * (a * a + b * b) / 12.0,
        ];
        for (got, want) in shape.unit_inertia.to_array().iter().zip(want) {
            assert!(close(*got, want), "{name}: inertia {got} ≠ {want}");
        }
        assert_eq!(shape.body.vertices().len(), 8, "{name}");
        // The hull adds nothing to a closed convex mesh; a point cloud has no volume of its own.
        let report = check(&s, &file, &registry).unwrap();
        let shapes = &report.file_shapes;
        assert_eq!(shapes.len(), 1, "{name}");
        if name.ends_with(".XYZ") {
            assert_eq!(shapes[0].input_volume, None);
            assert_eq!(shapes[0].points, 9);
        } else {
            assert!(close(shapes[0].input_volume.unwrap(), v), "{name}");
            assert!(shapes[0].added_volume.unwrap().abs() < 1e-12, "{name}");
        }
        assert_eq!(shapes[0].hull_vertices, 8, "{name}");
    }
}

/// The OBJ file without its comment and object lines: the first line is a vertex.
fn headless_obj(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let text = String::from_utf8(obj(points, faces)).unwrap();
    text.splitn(3, '\n').nth(2).unwrap().as_bytes().to_vec()
}

/// The point cloud without its header line: the first line is a point.
fn headless_xyz(points: &[DVec3], faces: &[Vec<usize>]) -> Vec<u8> {
    let text = String::from_utf8(xyz(points, faces)).unwrap();
    text.split_once('\n').unwrap().1.as_bytes().to_vec()
}

#[test]
fn a_byte_order_mark_changes_nothing_in_the_text_formats() {
    // Some editors start a text file with a UTF-8 byte-order mark. Left on, it would hide
    // an OBJ file's first vertex and make a point cloud's first point a header line.
    let d = dir("bom");
    let (points, faces) = box_2_1_half();
    let registry = ForceModelRegistry::default();
    let writers: [(&str, Writer); 3] = [
        ("box.obj", headless_obj),
        ("box_ascii.ply", ply_ascii),
        ("box.xyz", headless_xyz),
    ];
    for (name, write) in writers {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(write(&points, &faces));
        std::fs::write(d.join(name), bytes).unwrap();
        let (s, file) = scenario(&d, &format!("File(path: \"{name}\", scale: KeepSize)"), 1);
        let exp = build(&s, &file, &registry, 1, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let shape = exp
            .world
            .shapes()
            .get(exp.populations[0].shapes[0])
            .unwrap();
        assert!(close(shape.volume, 1.0), "{name}: volume {}", shape.volume);
        assert_eq!(shape.body.vertices().len(), 8, "{name}");
    }
}

/// The L-shaped prism: the square 2 × 2 without its corner square 1 × 1, 1 high.
fn l_prism() -> (Vec<DVec3>, Vec<Vec<usize>>) {
    prism(
        &[
            (0.0, 0.0),
            (2.0, 0.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 2.0),
            (0.0, 2.0),
        ],
        1.0,
    )
}

#[test]
fn the_hull_of_an_l_shaped_prism_adds_the_missing_triangle() {
    let d = dir("l");
    let (points, faces) = l_prism();
    let registry = ForceModelRegistry::default();
    for (name, write) in FORMATS.iter().filter(|(n, _)| !n.ends_with(".XYZ")) {
        let name = name.replace("box", "l");
        std::fs::write(d.join(&name), write(&points, &faces)).unwrap();
        let (s, file) = scenario(&d, &format!("File(path: \"{name}\", scale: KeepSize)"), 1);
        let report = check(&s, &file, &registry).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let r = &report.file_shapes[0];
        // The mesh: 4 − 1 = 3; its hull cuts the inner corner by a triangle of area 1/2
        // (through (2, 1) and (1, 2)): 3.5.
        assert!(close(r.input_volume.unwrap(), 3.0), "{name}: {r:?}");
        assert!(close(r.hull_volume, 3.5), "{name}: {r:?}");
        assert!(close(r.added_volume.unwrap(), 0.5), "{name}: {r:?}");
        assert!(close(r.added_fraction.unwrap(), 0.5 / 3.0), "{name}: {r:?}");
        // The inner corner's two vertices are not on the hull.
        assert_eq!(r.hull_vertices, 10, "{name}");
    }
}

#[test]
fn diameter_scales_to_the_equivalent_sphere_diameter() {
    let d = dir("diameter");
    let (points, faces) = l_prism();
    std::fs::write(d.join("l.obj"), obj(&points, &faces)).unwrap();
    let registry = ForceModelRegistry::default();
    for (scale, want) in [
        ("Diameter(0.01)", 0.01),
        ("Diameter(3.0)", 3.0),
        (
            "Factor(0.5)",
            (6.0 * 3.5 * 0.125 / std::f64::consts::PI).cbrt(),
        ),
        ("KeepSize", (6.0 * 3.5 / std::f64::consts::PI).cbrt()),
    ] {
        let (s, file) = scenario(&d, &format!("File(path: \"l.obj\", scale: {scale})"), 1);
        let exp = build(&s, &file, &registry, 1, true).unwrap();
        let shape = exp
            .world
            .shapes()
            .get(exp.populations[0].shapes[0])
            .unwrap();
        let diameter = 2.0 * shape.equivalent_radius;
        assert!(
            (diameter - want).abs() <= 1e-12 * want,
            "{scale}: {diameter} ≠ {want}"
        );
    }
}

#[test]
fn a_population_cycles_through_the_shapes_of_its_files() {
    let d = dir("cycle");
    let (bp, bf) = box_2_1_half();
    std::fs::write(d.join("box.stl"), stl_binary(&bp, &bf)).unwrap();
    // Two grains in one point cloud, separated by a blank line: a unit cube and a
    // tetrahedron of volume 1/6.
    let mut cloud = String::new();
    for i in 0..8 {
        cloud += &format!("{} {} {}\n", i & 1, (i >> 1) & 1, (i >> 2) & 1);
    }
    cloud += "\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n";
    std::fs::write(d.join("two.xyz"), cloud).unwrap();
    let (s, file) = scenario(
        &d,
        "Files(paths: [\"two.xyz\", \"box.stl\"], scale: KeepSize)",
        5,
    );
    let registry = ForceModelRegistry::default();
    let exp = build(&s, &file, &registry, 1, true).unwrap();
    let pop = &exp.populations[0];
    assert_eq!(pop.shapes.len(), 3);
    let volumes: Vec<f64> = exp
        .world
        .grains()
        .map(|g| {
            exp.world
                .shapes()
                .get(exp.world.grain(g).unwrap().shape)
                .unwrap()
                .volume
        })
        .collect();
    let want = [1.0, 1.0 / 6.0, 1.0, 1.0, 1.0 / 6.0];
    assert_eq!(volumes.len(), 5);
    for (got, want) in volumes.iter().zip(want) {
        assert!(close(*got, want), "{volumes:?}");
    }
}

/// The error `build` gives for a file named `name` holding `bytes`.
fn error_of(d: &Path, name: &str, bytes: &[u8]) -> String {
    std::fs::write(d.join(name), bytes).unwrap();
    let (s, file) = scenario(d, &format!("File(path: \"{name}\", scale: KeepSize)"), 1);
    match build(&s, &file, &ForceModelRegistry::default(), 1, false) {
        Ok(_) => panic!("{name} accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn broken_files_are_named_with_their_line() {
    let d = dir("broken");
    let path = |name: &str| d.join(name).display().to_string();
    let cases: [(&str, &[u8], Option<usize>, &str); 12] = [
        (
            "bad.obj",
            b"v 0 0 0\nv 1 0 0\nv 0 1 oops\n",
            Some(3),
            "not a number",
        ),
        ("nan.obj", b"v 0 0 0\nv 1 0 nan\n", Some(2), "not finite"),
        (
            "empty.obj",
            b"o first\nv 0 0 0\no second\nf 1 1 1\n",
            Some(1),
            "empty",
        ),
        (
            "face.obj",
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",
            Some(4),
            "no vertex",
        ),
        (
            "inf.xyz",
            b"0 0 0\n1 0 0\n0 1 0\n0 0 inf\n",
            Some(4),
            "not finite",
        ),
        (
            "short.xyz",
            b"# comment\n0 0 0\n1 0 0\n0 1 0\n",
            Some(2),
            "at least 4 points",
        ),
        (
            "flat.csv",
            b"0,0,0\n1,0,0\n0,1,0\n1,1,0\n",
            Some(1),
            "plane",
        ),
        ("few.xyz", b"0 0 0\n1 0\n", Some(2), "2 fields"),
        (
            "bad.stl",
            b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 x\n",
            Some(4),
            "not a number",
        ),
        ("cut.stl", &[0u8; 84 + 20], None, "cut short"),
        ("shape.dat", b"0 0 0\n", None, "unknown kind of shape file"),
        (
            "bad.ply",
            b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\nq\n",
            None,
            "PLY",
        ),
    ];
    for (name, bytes, line, words) in cases {
        let mut bytes = bytes.to_vec();
        if name == "cut.stl" {
            // A header announcing 3 triangles, and less than one.
            bytes[80..84].copy_from_slice(&3u32.to_le_bytes());
        }
        let e = error_of(&d, name, &bytes);
        let at = match line {
            Some(line) => format!("{}:{line}: ", path(name)),
            None => format!("{}: ", path(name)),
        };
        assert!(e.starts_with(&at), "{name}: {e}");
        assert!(e.contains(words), "{name}: {e}");
    }
    // A missing file.
    let (s, file) = scenario(&d, "File(path: \"gone.obj\", scale: KeepSize)", 1);
    let e = build(&s, &file, &ForceModelRegistry::default(), 1, false)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(&format!("{}: cannot be read", path("gone.obj"))),
        "{e}"
    );
}

#[test]
fn a_population_needs_exactly_one_way_to_make_its_grains() {
    let d = dir("both");
    let registry = ForceModelRegistry::default();
    for (fields, words) in [
        ("", "grains[0]: no grain shape"),
        ("vertices: 8,", "grains[0].semi_axes: missing"),
        (
            "vertices: 8, semi_axes: (1.0, 1.0, 1.0), shape: File(path: \"a.obj\", scale: KeepSize),",
            "grains[0].shape: given together",
        ),
        (
            "shape: File(path: \"a.obj\", scale: Diameter(-1.0)),",
            "grains[0].shape.scale",
        ),
    ] {
        let text = format!(
            r#"Scenario(name: "x", seed: 1, time: (dt: 1e-7, end: 1e-6, output_interval: 1e-7),
    gravity: (0.0, 0.0, 0.0), materials: [(name: "m", density: 1.0)],
    force_model: (name: "volumetric"),
    grains: [(name: "g", count: 1, {fields} material: "m", placement: Points([(0.0, 0.0, 0.0)]))])"#
        );
        let file = d.join("s.ron");
        let s = parse(&text, &file).unwrap();
        let errors = check(&s, &file, &registry).unwrap_err();
        let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(all.iter().any(|e| e.contains(words)), "{fields}: {all:?}");
    }
}

/// A small deterministic generator for the fuzzing below.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn no_input_makes_a_reader_panic() {
    let d = dir("fuzz");
    let (points, faces) = l_prism();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for (name, write) in FORMATS {
        let good = write(&points, &faces);
        let file = d.join(name);
        let mut inputs: Vec<Vec<u8>> = (0..good.len())
            .step_by(7)
            .map(|n| good[..n].to_vec())
            .collect();
        for _ in 0..200 {
            let mut bytes = good.clone();
            for _ in 0..1 + next(&mut state) % 4 {
                let at = (next(&mut state) % bytes.len() as u64) as usize;
                bytes[at] = next(&mut state) as u8;
            }
            inputs.push(bytes);
        }
        inputs.push((0..512).map(|_| next(&mut state) as u8).collect());
        for bytes in inputs {
            std::fs::write(&file, &bytes).unwrap();
            // Either the shapes or an error naming the file; never a panic.
            if let Err(e) = shape_file::read(&file, name) {
                assert!(
                    e.to_string().starts_with(&file.display().to_string()),
                    "{e}"
                );
            }
        }
    }
}

#[test]
fn a_resumed_run_uses_the_shapes_it_started_with() {
    let d = dir("resume");
    let (points, faces) = box_2_1_half();
    std::fs::write(d.join("box.obj"), obj(&points, &faces)).unwrap();
    let (s, file) = scenario(&d, "File(path: \"box.obj\", scale: Diameter(0.01))", 2);
    let registry = ForceModelRegistry::default();
    let out = d.join("out");
    let mut runner = Runner::start(&s, &file, &registry, 1, &out).unwrap();
    runner.run(Some(6), &mut |_| {}).unwrap();
    let started = runner.exp.file_shapes.clone();
    drop(runner);
    // The file changes and then goes: the resumed run keeps the box.
    std::fs::write(d.join("box.obj"), b"v 0 0 0\n").unwrap();
    let mut resumed = Runner::resume(&out, &registry, 1).unwrap();
    assert_eq!(resumed.exp.file_shapes, started);
    std::fs::remove_file(d.join("box.obj")).unwrap();
    resumed.run(None, &mut |_| {}).unwrap();
    let shape = resumed
        .exp
        .world
        .shapes()
        .get(resumed.exp.populations[0].shapes[0])
        .unwrap();
    assert!((2.0 * shape.equivalent_radius - 0.01).abs() < 1e-14);
}
