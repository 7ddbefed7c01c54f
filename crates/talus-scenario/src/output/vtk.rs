//! Grains and walls as VTK XML unstructured grids (`.vtu`) for ParaView.
//!
//! Every body is one `VTK_POLYHEDRON` cell (type 42) whose points are its world-frame
//! vertices. Polyhedron cells need, besides `connectivity`/`offsets`/`types`, the face stream
//! `faces` (per cell: number of faces, then for each face its point count and global point
//! ids) and `faceoffsets` (per cell: the end of its part of `faces`), the layout every
//! ParaView since 4.x reads. Faces are listed counter-clockwise seen from outside, so their
//! right-hand normals point out of the grain as VTK expects.
//!
//! Arrays are stored inline in VTK's `binary` format: base64 of a `UInt64` byte count followed
//! by the little-endian values. This keeps full `f64` precision at about a third of the size of
//! ASCII, needs no appended-data offsets, and is what ParaView, VTK and meshio read.
//! The simulation time is stored as the `TimeValue` field-data array ParaView picks up.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use talus_geom::glam::{DMat3, DVec3};
use talus_geom::{ConvexPolyhedron, Pose};

use crate::output::atomic::write_atomic_with;

/// The VTK cell type of a general polyhedron.
pub const VTK_POLYHEDRON: u8 = 42;

/// One grain at the time of a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct GrainFrame<'a> {
    /// Identifier of the grain, stable over the run (cell data `grain_id`).
    pub id: u32,
    /// Material index (cell data `material`).
    pub material: u32,
    /// Population index (cell data `population`).
    pub population: u32,
    /// Shape in the body frame, whose origin is the centre of mass.
    pub shape: &'a ConvexPolyhedron,
    /// Placement: body frame to world frame.
    pub pose: Pose,
    /// Velocity of the centre of mass.
    pub velocity: DVec3,
    /// Angular velocity, world frame.
    pub angular_velocity: DVec3,
}

/// One wall at the time of a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct WallFrame<'a> {
    /// Name of the wall from the scenario (field data `wall_name`, one entry per cell).
    pub name: &'a str,
    /// Index of the wall (cell data `wall_index`).
    pub index: u32,
    /// Shape in the wall's own frame.
    pub shape: &'a ConvexPolyhedron,
    /// Placement: wall frame to world frame.
    pub pose: Pose,
    /// Translational velocity of the wall.
    pub velocity: DVec3,
}

/// Writes the grains of one snapshot at `time` to `path` as one polyhedron cell each,
/// atomically.
///
/// Cell data: `grain_id`, `material`, `population` (UInt32), `position` (centre of mass), `velocity`, `angular_velocity` (3 components)
/// and `speed` (Float64). Point data: `velocity`, the rigid-body velocity `v + ω × (x − c)` of
/// each vertex, with `c` the grain's position (its centre of mass).
///
/// # Errors
/// Any I/O error of writing the file.
pub fn write_grains_vtu(path: &Path, time: f64, grains: &[GrainFrame]) -> io::Result<()> {
    let columns = GrainColumns::of(grains);
    let time = [time];
    let doc = Document {
        field_data: vec![Array::new("TimeValue", 1, Data::F64(&time))],
        point_data: columns.point_data(),
        cell_data: columns.cell_data(),
        mesh: &columns.mesh,
    };
    write_atomic_with(path, |w| doc.write(w))
}

/// Writes the parallel file (`.pvtu`) of one snapshot whose grains are split into `pieces`,
/// each a file [`write_grains_vtu`] wrote, named relative to the folder of `path`: the
/// arrays every piece holds, then the pieces in order. ParaView reads it as the union of
/// the pieces; the snapshot's time is in each piece (and in the run's `.pvd`).
///
/// # Errors
/// Any I/O error of writing the file.
pub fn write_grains_pvtu(path: &Path, pieces: &[String]) -> io::Result<()> {
    // The declarations are those of the arrays a piece holds, read off an empty one.
    let columns = GrainColumns::of(&[]);
    write_atomic_with(path, |w| {
        w.write_all(
            b"<?xml version=\"1.0\"?>\n<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" \
              byte_order=\"LittleEndian\" header_type=\"UInt64\">\n\
              <PUnstructuredGrid GhostLevel=\"0\">\n",
        )?;
        write_declarations(
            w,
            "PPointData",
            " Vectors=\"velocity\"",
            &columns.point_data(),
        )?;
        write_declarations(
            w,
            "PCellData",
            " Vectors=\"velocity\"",
            &columns.cell_data(),
        )?;
        write_declarations(
            w,
            "PPoints",
            "",
            &[Array::new("Points", 3, Data::F64(&columns.mesh.points))],
        )?;
        for piece in pieces {
            writeln!(w, "<Piece Source=\"{}\"/>", xml_escape(piece))?;
        }
        w.write_all(b"</PUnstructuredGrid>\n</VTKFile>\n")
    })
}

/// The arrays of the grains of one snapshot, as a `.vtu` piece holds them.
struct GrainColumns {
    mesh: PolyhedronMesh,
    point_velocity: Vec<f64>,
    ids: Vec<u32>,
    materials: Vec<u32>,
    populations: Vec<u32>,
    position: Vec<f64>,
    velocity: Vec<f64>,
    angular_velocity: Vec<f64>,
    speed: Vec<f64>,
}

impl GrainColumns {
    fn of(grains: &[GrainFrame]) -> GrainColumns {
        let mut mesh = PolyhedronMesh::default();
        let mut point_velocity = Vec::new();
        for g in grains {
            let points = mesh.add(g.shape, &g.pose);
            for x in points.chunks_exact(3) {
                let r = DVec3::new(x[0], x[1], x[2]) - g.pose.position;
                let v = g.velocity + g.angular_velocity.cross(r);
                point_velocity.extend_from_slice(&v.to_array());
            }
        }
        GrainColumns {
            mesh,
            point_velocity,
            ids: grains.iter().map(|g| g.id).collect(),
            materials: grains.iter().map(|g| g.material).collect(),
            populations: grains.iter().map(|g| g.population).collect(),
            position: flatten(grains.iter().map(|g| g.pose.position)),
            velocity: flatten(grains.iter().map(|g| g.velocity)),
            angular_velocity: flatten(grains.iter().map(|g| g.angular_velocity)),
            speed: grains.iter().map(|g| g.velocity.length()).collect(),
        }
    }

    fn point_data(&self) -> Vec<Array<'_>> {
        vec![Array::new("velocity", 3, Data::F64(&self.point_velocity))]
    }

    fn cell_data(&self) -> Vec<Array<'_>> {
        vec![
            Array::new("grain_id", 1, Data::U32(&self.ids)),
            Array::new("material", 1, Data::U32(&self.materials)),
            Array::new("population", 1, Data::U32(&self.populations)),
            Array::new("position", 3, Data::F64(&self.position)),
            Array::new("velocity", 3, Data::F64(&self.velocity)),
            Array::new("angular_velocity", 3, Data::F64(&self.angular_velocity)),
            Array::new("speed", 1, Data::F64(&self.speed)),
        ]
    }
}

/// Writes the walls of one snapshot at `time` to `path` as one polyhedron cell each,
/// atomically.
///
/// Cell data: `wall_index` (UInt32) and `velocity` (Float64, 3 components). Field data:
/// `TimeValue` and `wall_name`, a string array with the name of cell `k` at entry `k`.
///
/// # Errors
/// Any I/O error of writing the file.
pub fn write_walls_vtu(path: &Path, time: f64, walls: &[WallFrame]) -> io::Result<()> {
    let mut mesh = PolyhedronMesh::default();
    for wall in walls {
        mesh.add(wall.shape, &wall.pose);
    }
    let indices: Vec<u32> = walls.iter().map(|w| w.index).collect();
    let velocity = flatten(walls.iter().map(|w| w.velocity));
    let names: Vec<&str> = walls.iter().map(|w| w.name).collect();
    let time = [time];
    let doc = Document {
        field_data: vec![
            Array::new("TimeValue", 1, Data::F64(&time)),
            Array::new("wall_name", 1, Data::Str(&names)),
        ],
        point_data: Vec::new(),
        cell_data: vec![
            Array::new("wall_index", 1, Data::U32(&indices)),
            Array::new("velocity", 3, Data::F64(&velocity)),
        ],
        mesh: &mesh,
    };
    write_atomic_with(path, |w| doc.write(w))
}

fn flatten(vectors: impl Iterator<Item = DVec3>) -> Vec<f64> {
    vectors.flat_map(|v| v.to_array()).collect()
}

/// Points and polyhedron cells in the array layout of a `.vtu` piece.
#[derive(Default)]
struct PolyhedronMesh {
    /// x, y, z of every point.
    points: Vec<f64>,
    connectivity: Vec<i64>,
    offsets: Vec<i64>,
    faces: Vec<i64>,
    face_offsets: Vec<i64>,
}

impl PolyhedronMesh {
    /// Appends `shape` placed at `pose` as one cell; returns the coordinates of its points.
    fn add(&mut self, shape: &ConvexPolyhedron, pose: &Pose) -> &[f64] {
        let first_point = self.points.len() / 3;
        let base = first_point as i64;
        // One matrix per body instead of a quaternion product per vertex.
        let rotation: DMat3 = pose.rotation_matrix();
        for &v in shape.vertices() {
            let x = pose.position + rotation * v;
            self.points.extend_from_slice(&x.to_array());
        }
        let n_vertices = shape.vertices().len() as i64;
        self.connectivity.extend(base..base + n_vertices);
        self.offsets.push(self.connectivity.len() as i64);
        self.faces.push(shape.faces().len() as i64);
        for f in 0..shape.faces().len() {
            let loop_vertices = shape.face_vertices(f);
            self.faces.push(loop_vertices.len() as i64);
            self.faces
                .extend(loop_vertices.map(|v| base + i64::from(v)));
        }
        self.face_offsets.push(self.faces.len() as i64);
        &self.points[3 * first_point..]
    }

    fn n_points(&self) -> usize {
        self.points.len() / 3
    }

    fn n_cells(&self) -> usize {
        self.offsets.len()
    }
}

/// Typed values of one data array.
enum Data<'a> {
    F64(&'a [f64]),
    U32(&'a [u32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    /// Strings, each stored with a terminating NUL as VTK's string arrays are.
    Str(&'a [&'a str]),
}

impl Data<'_> {
    fn type_name(&self) -> &'static str {
        match self {
            Data::F64(_) => "Float64",
            Data::U32(_) => "UInt32",
            Data::I64(_) => "Int64",
            Data::U8(_) => "UInt8",
            Data::Str(_) => "String",
        }
    }

    /// Number of values (strings count as one value each).
    fn len(&self) -> usize {
        match self {
            Data::F64(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::U8(v) => v.len(),
            Data::Str(v) => v.len(),
        }
    }

    /// The `UInt64` byte-count header followed by the little-endian values.
    fn header_and_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; 8];
        match self {
            Data::F64(v) => v.iter().for_each(|x| bytes.extend(x.to_le_bytes())),
            Data::U32(v) => v.iter().for_each(|x| bytes.extend(x.to_le_bytes())),
            Data::I64(v) => v.iter().for_each(|x| bytes.extend(x.to_le_bytes())),
            Data::U8(v) => bytes.extend_from_slice(v),
            Data::Str(v) => v.iter().for_each(|s| {
                bytes.extend(s.bytes().filter(|&b| b != 0));
                bytes.push(0);
            }),
        }
        let count = (bytes.len() - 8) as u64;
        bytes[..8].copy_from_slice(&count.to_le_bytes());
        bytes
    }
}

/// A named data array.
struct Array<'a> {
    name: &'a str,
    components: usize,
    data: Data<'a>,
}

impl<'a> Array<'a> {
    fn new(name: &'a str, components: usize, data: Data<'a>) -> Self {
        Array {
            name,
            components,
            data,
        }
    }

    /// `<element type=… Name=… [NumberOfComponents=…]`, unclosed.
    fn open_tag(&self, element: &str) -> String {
        let mut open = format!(
            "<{element} type=\"{}\" Name=\"{}\"",
            self.data.type_name(),
            xml_escape(self.name)
        );
        if self.components != 1 {
            let _ = write!(open, " NumberOfComponents=\"{}\"", self.components);
        }
        open
    }

    fn write(&self, w: &mut dyn Write, indent: &str) -> io::Result<()> {
        let mut open = format!("{indent}{}", self.open_tag("DataArray"));
        // Field data and string arrays have no piece size to infer the tuple count from.
        let tuples = self.data.len() / self.components.max(1);
        let _ = write!(open, " NumberOfTuples=\"{tuples}\" format=\"binary\">");
        w.write_all(open.as_bytes())?;
        w.write_all(base64_encode(&self.data.header_and_bytes()).as_bytes())?;
        w.write_all(b"</DataArray>\n")
    }
}

/// Everything in one `.vtu` file.
struct Document<'a> {
    field_data: Vec<Array<'a>>,
    point_data: Vec<Array<'a>>,
    cell_data: Vec<Array<'a>>,
    mesh: &'a PolyhedronMesh,
}

impl Document<'_> {
    fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        let mesh = self.mesh;
        w.write_all(
            b"<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" \
              byte_order=\"LittleEndian\" header_type=\"UInt64\">\n<UnstructuredGrid>\n",
        )?;
        write_section(w, "FieldData", "", &self.field_data)?;
        writeln!(
            w,
            "<Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">",
            mesh.n_points(),
            mesh.n_cells()
        )?;
        write_section(w, "PointData", " Vectors=\"velocity\"", &self.point_data)?;
        write_section(w, "CellData", " Vectors=\"velocity\"", &self.cell_data)?;
        write_section(
            w,
            "Points",
            "",
            &[Array::new("Points", 3, Data::F64(&mesh.points))],
        )?;
        let types = vec![VTK_POLYHEDRON; mesh.n_cells()];
        write_section(
            w,
            "Cells",
            "",
            &[
                Array::new("connectivity", 1, Data::I64(&mesh.connectivity)),
                Array::new("offsets", 1, Data::I64(&mesh.offsets)),
                Array::new("types", 1, Data::U8(&types)),
                Array::new("faces", 1, Data::I64(&mesh.faces)),
                Array::new("faceoffsets", 1, Data::I64(&mesh.face_offsets)),
            ],
        )?;
        w.write_all(b"</Piece>\n</UnstructuredGrid>\n</VTKFile>\n")
    }
}

/// Writes `<tag attributes>` with the arrays, or nothing when there are none (an empty
/// `PointData` with a `Vectors` attribute naming a missing array confuses readers).
fn write_section(
    w: &mut dyn Write,
    tag: &str,
    attributes: &str,
    arrays: &[Array],
) -> io::Result<()> {
    if arrays.is_empty() {
        return Ok(());
    }
    writeln!(w, "<{tag}{attributes}>")?;
    for array in arrays {
        array.write(w, "  ")?;
    }
    writeln!(w, "</{tag}>")
}

/// Writes `<tag attributes>` declaring the arrays (type, name, components) without their
/// values, as a parallel file lists what its pieces hold.
fn write_declarations(
    w: &mut dyn Write,
    tag: &str,
    attributes: &str,
    arrays: &[Array],
) -> io::Result<()> {
    writeln!(w, "<{tag}{attributes}>")?;
    for array in arrays {
        writeln!(w, "  {}/>", array.open_tag("PDataArray"))?;
    }
    writeln!(w, "</{tag}>")
}

/// Escapes text for an XML attribute value or element content.
#[must_use]
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// Standard base64 (RFC 4648, with padding), as VTK's `binary` format expects.
#[must_use]
pub fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |k: u32| char::from(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize]);
        out.push(sextet(0));
        out.push(sextet(1));
        out.push(if chunk.len() > 1 { sextet(2) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(3) } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use quick_xml::events::Event;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use talus_geom::generate;
    use talus_geom::glam::DQuat;

    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64_encode(plain.as_bytes()), encoded);
        }
        assert_eq!(base64_encode(&[0xfb, 0xff, 0xbf]), "+/+/");
    }

    /// Decoding written independently of the encoder: look each character up by position.
    fn base64_decode(text: &str) -> Vec<u8> {
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut n_bits = 0;
        let mut out = Vec::new();
        for c in text.trim().chars().filter(|&c| c != '=') {
            bits = (bits << 6) | alphabet.find(c).unwrap() as u32;
            n_bits += 6;
            if n_bits >= 8 {
                n_bits -= 8;
                out.push((bits >> n_bits) as u8);
                bits &= (1 << n_bits) - 1;
            }
        }
        out
    }

    /// A decoded array: its section (`Points`, `CellData`, …), VTK type, components and raw
    /// little-endian values (after checking the byte-count header).
    #[derive(Debug)]
    struct ParsedArray {
        vtk_type: String,
        components: usize,
        bytes: Vec<u8>,
    }

    impl ParsedArray {
        fn f64s(&self) -> Vec<f64> {
            assert_eq!(self.vtk_type, "Float64");
            self.bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        }
        fn i64s(&self) -> Vec<i64> {
            assert_eq!(self.vtk_type, "Int64");
            self.bytes
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        }
        fn u32s(&self) -> Vec<u32> {
            assert_eq!(self.vtk_type, "UInt32");
            self.bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        }
        fn vectors(&self) -> Vec<DVec3> {
            assert_eq!(self.components, 3);
            self.f64s()
                .chunks_exact(3)
                .map(|c| DVec3::new(c[0], c[1], c[2]))
                .collect()
        }
    }

    struct ParsedVtu {
        n_points: usize,
        n_cells: usize,
        arrays: HashMap<(String, String), ParsedArray>,
    }

    impl ParsedVtu {
        fn get(&self, section: &str, name: &str) -> &ParsedArray {
            self.arrays
                .get(&(section.to_string(), name.to_string()))
                .unwrap_or_else(|| panic!("no {section}/{name}"))
        }
    }

    /// An element's name and attributes.
    fn tag_and_attributes(e: &quick_xml::events::BytesStart) -> (String, HashMap<String, String>) {
        let tag = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
        let attrs = e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                (
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.unescape_value().unwrap().into_owned(),
                )
            })
            .collect();
        (tag, attrs)
    }

    fn parse_vtu(path: &Path) -> ParsedVtu {
        let text = std::fs::read_to_string(path).unwrap();
        let mut reader = quick_xml::Reader::from_str(&text);
        let mut stack: Vec<String> = Vec::new();
        let mut current: Option<(String, ParsedArray)> = None;
        let mut parsed = ParsedVtu {
            n_points: 0,
            n_cells: 0,
            arrays: HashMap::new(),
        };
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) => {
                    let (tag, attrs) = tag_and_attributes(&e);
                    match tag.as_str() {
                        "VTKFile" => {
                            assert_eq!(attrs["type"], "UnstructuredGrid");
                            assert_eq!(attrs["byte_order"], "LittleEndian");
                            assert_eq!(attrs["header_type"], "UInt64");
                        }
                        "Piece" => {
                            parsed.n_points = attrs["NumberOfPoints"].parse().unwrap();
                            parsed.n_cells = attrs["NumberOfCells"].parse().unwrap();
                        }
                        "DataArray" => {
                            assert_eq!(attrs["format"], "binary");
                            let components = attrs
                                .get("NumberOfComponents")
                                .map_or(1, |c| c.parse().unwrap());
                            current = Some((
                                attrs["Name"].clone(),
                                ParsedArray {
                                    vtk_type: attrs["type"].clone(),
                                    components,
                                    bytes: Vec::new(),
                                },
                            ));
                        }
                        _ => {}
                    }
                    stack.push(tag);
                }
                Event::Text(t) => {
                    if let Some((_, array)) = current.as_mut() {
                        let raw = base64_decode(std::str::from_utf8(&t).unwrap());
                        let count = u64::from_le_bytes(raw[..8].try_into().unwrap());
                        assert_eq!(count as usize, raw.len() - 8, "byte-count header");
                        array.bytes = raw[8..].to_vec();
                    }
                }
                Event::End(_) => {
                    let tag = stack.pop().unwrap();
                    if tag == "DataArray" {
                        let (name, array) = current.take().unwrap();
                        let section = stack.last().unwrap().clone();
                        assert!(parsed.arrays.insert((section, name), array).is_none());
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert!(stack.is_empty());
        parsed
    }

    fn temp_path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!(
            "talus-output-vtk-{name}-{}.vtu",
            std::process::id()
        ))
    }

    /// Newell normal (area vector) of a polygon, computed independently of talus-geom.
    fn newell(polygon: &[DVec3]) -> DVec3 {
        let mut n = DVec3::ZERO;
        for (k, a) in polygon.iter().enumerate() {
            let b = polygon[(k + 1) % polygon.len()];
            n += a.cross(b);
        }
        0.5 * n
    }

    #[test]
    fn grains_round_trip_with_outward_planar_faces_and_exact_volume() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let cube = generate::cube(2.0).unwrap();
        let tetra = generate::tetrahedron(1.5).unwrap();
        let grain = generate::ellipsoid_grain(40, DVec3::new(1.0, 0.7, 0.4), &mut rng).unwrap();
        let shapes = [&cube, &grain, &tetra];
        let grains: Vec<GrainFrame> = shapes
            .iter()
            .enumerate()
            .map(|(k, shape)| {
                let k = k as f64;
                GrainFrame {
                    id: 10 + k as u32,
                    material: k as u32 % 2,
                    population: 0,
                    shape,
                    pose: Pose::new(
                        DVec3::new(3.0 * k, -1.0, 0.5 * k),
                        DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.3 + k),
                    ),
                    velocity: DVec3::new(1.0, -2.0 * k, 0.25),
                    angular_velocity: DVec3::new(0.5, k, -3.0),
                }
            })
            .collect();
        let path = temp_path("grains");
        write_grains_vtu(&path, 1.25, &grains).unwrap();
        let vtu = parse_vtu(&path);

        let n_points: usize = shapes.iter().map(|s| s.vertices().len()).sum();
        assert_eq!(vtu.n_points, n_points);
        assert_eq!(vtu.n_cells, grains.len());
        assert_eq!(vtu.get("FieldData", "TimeValue").f64s(), vec![1.25]);
        assert_eq!(vtu.get("CellData", "grain_id").u32s(), vec![10, 11, 12]);
        assert_eq!(vtu.get("CellData", "material").u32s(), vec![0, 1, 0]);
        assert_eq!(vtu.get("Cells", "types").bytes, vec![42u8; 3]);

        let points = vtu.get("Points", "Points").vectors();
        let point_velocity = vtu.get("PointData", "velocity").vectors();
        let cell_velocity = vtu.get("CellData", "velocity").vectors();
        let cell_position = vtu.get("CellData", "position").vectors();
        let cell_omega = vtu.get("CellData", "angular_velocity").vectors();
        let speed = vtu.get("CellData", "speed").f64s();
        let connectivity = vtu.get("Cells", "connectivity").i64s();
        let offsets = vtu.get("Cells", "offsets").i64s();
        let faces = vtu.get("Cells", "faces").i64s();
        let face_offsets = vtu.get("Cells", "faceoffsets").i64s();
        assert_eq!(points.len(), n_points);
        assert_eq!(point_velocity.len(), n_points);

        let mut cell_start = 0usize;
        let mut face_start = 0usize;
        for (c, g) in grains.iter().enumerate() {
            assert_eq!(cell_velocity[c], g.velocity);
            assert_eq!(cell_position[c], g.pose.position);
            assert_eq!(cell_omega[c], g.angular_velocity);
            assert_eq!(speed[c], g.velocity.length());

            let cell_points: Vec<usize> = connectivity[cell_start..offsets[c] as usize]
                .iter()
                .map(|&p| p as usize)
                .collect();
            cell_start = offsets[c] as usize;
            assert_eq!(cell_points.len(), g.shape.vertices().len());
            for (&p, &v) in cell_points.iter().zip(g.shape.vertices()) {
                let expected = g.pose.position + g.pose.rotation * v;
                assert!((points[p] - expected).length() < 1e-12);
                let r = points[p] - g.pose.position;
                let expected_v = g.velocity + g.angular_velocity.cross(r);
                assert!((point_velocity[p] - expected_v).length() < 1e-12);
            }

            // Walk this cell's face stream.
            let stream = &faces[face_start..face_offsets[c] as usize];
            face_start = face_offsets[c] as usize;
            let n_faces = stream[0] as usize;
            assert_eq!(n_faces, g.shape.faces().len());
            let centroid =
                cell_points.iter().map(|&p| points[p]).sum::<DVec3>() / cell_points.len() as f64;
            let mut k = 1;
            let mut volume = 0.0;
            let mut directed_edges = HashMap::new();
            for _ in 0..n_faces {
                let n = stream[k] as usize;
                let ids: Vec<usize> = stream[k + 1..k + 1 + n]
                    .iter()
                    .map(|&p| p as usize)
                    .collect();
                k += 1 + n;
                assert!(ids.iter().all(|p| cell_points.contains(p)));
                let polygon: Vec<DVec3> = ids.iter().map(|&p| points[p]).collect();
                let area = newell(&polygon);
                let normal = area.normalize();
                let face_centroid = polygon.iter().sum::<DVec3>() / n as f64;
                for x in &polygon {
                    assert!(
                        normal.dot(*x - face_centroid).abs() < 1e-9,
                        "non-planar face"
                    );
                }
                assert!(normal.dot(face_centroid - centroid) > 0.0, "inward face");
                // Divergence theorem: V = (1/3) Σ_f (x_f · n_f) A_f.
                volume += face_centroid.dot(area) / 3.0;
                for j in 0..n {
                    let edge = (ids[j], ids[(j + 1) % n]);
                    assert!(directed_edges.insert(edge, ()).is_none());
                }
            }
            assert_eq!(k, stream.len());
            // Closed and consistently oriented: every edge is run once each way.
            for &(a, b) in directed_edges.keys() {
                assert!(directed_edges.contains_key(&(b, a)));
            }
            let reference = g.shape.volume();
            assert!(
                (volume - reference).abs() < 1e-12 * reference.max(1.0),
                "{volume} vs {reference}"
            );
        }
        assert_eq!(face_start, faces.len());
        std::fs::remove_file(&path).unwrap();
    }

    /// A declared array: section, name, VTK type, components.
    type Declaration = (String, String, String, usize);

    /// The declarations and piece sources of a `.pvtu`.
    fn parse_pvtu(path: &Path) -> (Vec<Declaration>, Vec<String>) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut reader = quick_xml::Reader::from_str(&text);
        let (mut declared, mut pieces, mut stack) = (Vec::new(), Vec::new(), Vec::<String>::new());
        loop {
            let (e, empty) = match reader.read_event().unwrap() {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    stack.pop();
                    continue;
                }
                Event::Eof => break,
                _ => continue,
            };
            let (tag, attrs) = tag_and_attributes(&e);
            match tag.as_str() {
                "VTKFile" => assert_eq!(attrs["type"], "PUnstructuredGrid"),
                "PDataArray" => declared.push((
                    stack.last().unwrap().clone(),
                    attrs.get("Name").cloned().unwrap_or_default(),
                    attrs["type"].clone(),
                    attrs
                        .get("NumberOfComponents")
                        .map_or(1, |c| c.parse().unwrap()),
                )),
                "Piece" => pieces.push(attrs["Source"].clone()),
                _ => {}
            }
            if !empty {
                stack.push(tag);
            }
        }
        (declared, pieces)
    }

    /// Grains split into pieces and a parallel file over them: the file declares exactly the
    /// arrays each piece holds, lists the pieces in order, and the pieces together hold the
    /// cells, points and values of the whole snapshot written as one file.
    #[test]
    fn a_snapshot_in_pieces_holds_the_whole_snapshot() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let shapes: Vec<ConvexPolyhedron> = (0..5)
            .map(|k| {
                generate::ellipsoid_grain(8 + 3 * k, DVec3::new(1.0, 0.8, 0.5), &mut rng).unwrap()
            })
            .collect();
        let grains: Vec<GrainFrame> = shapes
            .iter()
            .enumerate()
            .map(|(k, shape)| GrainFrame {
                id: k as u32,
                material: 0,
                population: k as u32 % 2,
                shape,
                pose: Pose::new(
                    DVec3::new(2.0 * k as f64, 0.3, -1.0),
                    DQuat::from_rotation_z(0.4 * k as f64),
                ),
                velocity: DVec3::new(0.1 * k as f64, 1.0, 0.0),
                angular_velocity: DVec3::new(0.0, 0.0, 2.0 - k as f64),
            })
            .collect();
        let whole = temp_path("whole");
        write_grains_vtu(&whole, 0.75, &grains).unwrap();
        let dir = std::env::temp_dir().join(format!("talus-output-pvtu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Three pieces, one of them empty (a process whose region holds no grain).
        let split = [&grains[..2], &grains[2..2], &grains[2..]];
        let names: Vec<String> = (0..split.len()).map(|k| format!("g_p{k}.vtu")).collect();
        for (part, name) in split.iter().zip(&names) {
            write_grains_vtu(&dir.join(name), 0.75, part).unwrap();
        }
        let parallel = dir.join("g.pvtu");
        write_grains_pvtu(&parallel, &names).unwrap();

        let (declared, pieces) = parse_pvtu(&parallel);
        assert_eq!(pieces, names);
        let whole = parse_vtu(&whole);
        let pieces: Vec<ParsedVtu> = names.iter().map(|n| parse_vtu(&dir.join(n))).collect();
        let section_of = |p: &str| p.strip_prefix('P').unwrap().to_string();
        let mut held: Vec<Declaration> = whole
            .arrays
            .iter()
            .filter(|((section, _), _)| {
                ["PointData", "CellData", "Points"].contains(&section.as_str())
            })
            .map(|((section, name), a)| {
                (
                    section.clone(),
                    name.clone(),
                    a.vtk_type.clone(),
                    a.components,
                )
            })
            .collect();
        held.sort();
        let mut declared: Vec<Declaration> = declared
            .into_iter()
            .map(|(section, name, t, c)| {
                // The points' array needs no name in a parallel file; the pieces call it Points.
                let name = if section == "PPoints" {
                    "Points".into()
                } else {
                    name
                };
                (section_of(&section), name, t, c)
            })
            .collect();
        declared.sort();
        assert_eq!(declared, held, "declarations against the arrays of a piece");

        // Values: each array of the whole is the pieces' arrays one after the other.
        assert_eq!(
            pieces.iter().map(|p| p.n_cells).sum::<usize>(),
            whole.n_cells
        );
        assert_eq!(
            pieces.iter().map(|p| p.n_points).sum::<usize>(),
            whole.n_points
        );
        for (section, name) in [
            ("Points", "Points"),
            ("PointData", "velocity"),
            ("CellData", "grain_id"),
            ("CellData", "population"),
            ("CellData", "position"),
            ("CellData", "velocity"),
            ("CellData", "angular_velocity"),
            ("CellData", "speed"),
            ("Cells", "types"),
        ] {
            let joined: Vec<u8> = pieces
                .iter()
                .flat_map(|p| p.get(section, name).bytes.clone())
                .collect();
            assert_eq!(joined, whole.get(section, name).bytes, "{section}/{name}");
        }
        for p in &pieces {
            assert_eq!(p.get("FieldData", "TimeValue").f64s(), vec![0.75]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn walls_and_empty_frames_are_written() {
        let plate = generate::rectangular_box(DVec3::new(4.0, 4.0, 0.1)).unwrap();
        let walls = [
            WallFrame {
                name: "floor <bottom> & \"base\"",
                index: 0,
                shape: &plate,
                pose: Pose::IDENTITY,
                velocity: DVec3::ZERO,
            },
            WallFrame {
                name: "lid",
                index: 3,
                shape: &plate,
                pose: Pose::from_translation(DVec3::new(0.0, 0.0, 2.0)),
                velocity: DVec3::new(0.0, 0.0, -0.1),
            },
        ];
        let path = temp_path("walls");
        write_walls_vtu(&path, 0.5, &walls).unwrap();
        let vtu = parse_vtu(&path);
        assert_eq!(vtu.n_cells, 2);
        assert_eq!(vtu.n_points, 16);
        assert_eq!(vtu.get("CellData", "wall_index").u32s(), vec![0, 3]);
        assert_eq!(
            vtu.get("CellData", "velocity").vectors()[1],
            DVec3::new(0.0, 0.0, -0.1)
        );
        let names = &vtu.get("FieldData", "wall_name").bytes;
        assert_eq!(names, b"floor <bottom> & \"base\"\0lid\0");
        let z: Vec<f64> = vtu.get("Points", "Points").vectors()[8..]
            .iter()
            .map(|p| p.z)
            .collect();
        assert!(
            z.iter()
                .all(|&z| (z - 2.05).abs() < 1e-12 || (z - 1.95).abs() < 1e-12)
        );

        write_grains_vtu(&path, 0.0, &[]).unwrap();
        let empty = parse_vtu(&path);
        assert_eq!((empty.n_points, empty.n_cells), (0, 0));
        assert!(empty.get("Cells", "faces").bytes.is_empty());
        std::fs::remove_file(&path).unwrap();
    }
}
