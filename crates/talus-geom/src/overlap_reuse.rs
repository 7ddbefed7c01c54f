//! The overlap of a persisting contact from the faces that bounded its last one (thesis
//! §4.2: temporal coherence; design §3).
//!
//! While two grains stay in contact, the faces whose parts bound A∩B change rarely. Each of
//! those faces is clipped by the planes of the other grain's ones alone, which gives a part
//! that holds its true part (the face within the other grain); the parts are then checked:
//! every corner of a part lies in the other grain (a vertex of its own grain by a climb over
//! the other's faces, a corner cut out by a plane within that plane's face), which makes each
//! part exactly its face within the other grain, and the parts close (their vector areas sum
//! to zero), which makes them all of A∩B's boundary. A failed check gives `None`, and the
//! caller finds the overlap afresh.
//!
//! The work is kept to what the contact needs: every vertex of the listed faces is moved into
//! B's frame and measured against the other grain's listed planes once, and each face is
//! clipped only by the planes some vertex of it lies beyond (a plane no vertex lies beyond
//! leaves the face as it is); a face all of whose vertices lie beyond one plane has no part.
//!
//! Most contacts need the parts of one grain only. When the listed faces of one grain (call
//! it X, the other Y) all meet at a vertex `v` of X, the region they bound, `C_X` (a
//! half-space, a wedge or a cone with apex `v`), stands in for X: A∩B = C_X∩Y once
//! * every corner of every part of Y's listed faces within `C_X` lies in X (checked as
//!   above), so that C_X∩Y, whose corners are those and `v`, lies in X; and
//! * those parts cover Y's surface within `C_X`: each side of a part along an edge of Y
//!   has the face across that edge listed too, so the parts leave no hole but along
//!   `C_X`'s planes, and Y's surface within `C_X` is one piece, which holds for a
//!   half-space and a wedge, and for a cone when its apex lies in Y (each ray from the apex
//!   leaves Y once).
//!
//! The boundary of A∩B is then Y's parts and pieces of X's listed planes, all of which pass
//! through `v`: the cones from `v` over X's pieces have no volume, so the volume and centroid
//! are the sums of the cones from `v` over Y's parts alone; and X's pieces span the same rim
//! as Y's parts (the two close A∩B's boundary), so the contact's vector area and moment are
//! those of Y's parts, counted the other way round when Y is B. Where no grain's listed
//! faces meet at a vertex (or one's lies in another's plane), both grains' parts are clipped
//! and checked to close.

use glam::DVec3;

use crate::iso::Iso;
use crate::overlap::{BoundarySums, ORIGINAL, beyond, in_face};
use crate::polyhedron::{ConvexPolyhedron, polygon_area_vector};
use crate::tagged_polygon::TaggedPolygon;

/// Faces kept per contact, over both grains: a contact bounded by more is found afresh
/// each step. A grain resting on a wall or a large face is bounded there by as many of its
/// own faces as the plane cuts (9 to 11 of a 32-faced grain lying flat, against the wall's
/// one): with a limit per grain of 8, such a contact was found afresh at every step.
pub(crate) const HINT_FACES: usize = 16;

/// The faces of A and of B whose parts bounded the last A∩B (none kept: counts zero): A's
/// first, then B's, in one array. Face indices are kept in 16 bits (every contact holds a
/// hint, so its size is memory per grain); a grain of more faces is not reused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct BoundingFaces {
    faces: [u16; HINT_FACES],
    count_a: u8,
    count_b: u8,
}

impl BoundingFaces {
    /// Makes these the faces `a` and `b`, or none when either list is empty, both are too
    /// long to keep or one holds an index past 16 bits. In place: a hint built apart and
    /// copied in is stored a byte at a time and read back as wider words, which waits for
    /// the stores to be done.
    pub fn set(&mut self, a: &[u32], b: &[u32]) {
        let fits =
            |list: &[u32]| !list.is_empty() && list.iter().all(|&f| f <= u32::from(u16::MAX));
        let (count_a, count_b) = if fits(a) && fits(b) && a.len() + b.len() <= HINT_FACES {
            (a.len(), b.len())
        } else {
            (0, 0)
        };
        let listed = a[..count_a].iter().chain(&b[..count_b]);
        let faces = listed.map(|&f| f as u16).chain(std::iter::repeat(0));
        for (kept, f) in self.faces.iter_mut().zip(faces) {
            *kept = f;
        }
        (self.count_a, self.count_b) = (count_a as u8, count_b as u8);
    }

    /// How many faces of A and of B are kept.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        (usize::from(self.count_a), usize::from(self.count_b))
    }

    /// The faces of each grain, when there are some, all exist on `poly_a` and `poly_b` and
    /// none is listed twice (a part counted twice would double its share of the overlap).
    fn on(&self, poly_a: &ConvexPolyhedron, poly_b: &ConvexPolyhedron) -> Option<(&[u16], &[u16])> {
        let (count_a, count_b) = (usize::from(self.count_a), usize::from(self.count_b));
        let fa = self.faces.get(..count_a)?;
        let fb = self.faces.get(count_a..count_a + count_b)?;
        let fits = |faces: &[u16], poly: &ConvexPolyhedron| {
            let exist = faces.iter().all(|&f| usize::from(f) < poly.faces().len());
            // Each face once: below `IN_BITS` by a bit set, past it by a search.
            let mut seen = 0u64;
            let once = faces.iter().enumerate().all(|(i, &f)| {
                if u32::from(f) < IN_BITS {
                    let bit = 1u64 << f;
                    let first = seen & bit == 0;
                    seen |= bit;
                    first
                } else {
                    !faces[i + 1..].contains(&f)
                }
            });
            !faces.is_empty() && exist && once
        };
        (fits(fa, poly_a) && fits(fb, poly_b)).then_some((fa, fb))
    }
}

/// Vertices and faces numbered below this are found in a `u64` bit set, the others by a
/// search (see [`Side::list`], [`Reused::keep`], [`StandIn::fill`]).
const IN_BITS: u32 = u64::BITS;

/// Corners of the listed faces of one grain at most: a contact with more is found afresh.
const MAX_CORNERS: usize = 96;

/// The listed faces of one grain in B's frame: their planes, their vertices (each once) with
/// where they lie against the other grain's listed planes, and the corners of each face.
struct Side {
    /// Per listed face: its index, unit normal and offset.
    faces: [u32; HINT_FACES],
    planes: [(DVec3, f64); HINT_FACES],
    count: usize,
    /// Per vertex: its index on its grain, its position, which of the other side's planes
    /// it lies beyond (bit `j`), and whether it was checked to lie in the other grain.
    ids: [u32; MAX_CORNERS],
    points: [DVec3; MAX_CORNERS],
    beyond: [u16; MAX_CORNERS],
    /// Per vertex, which of the other side's planes it lies in (bit `j`: within the
    /// tolerance of plane `j`).
    near: [u16; MAX_CORNERS],
    checked: [bool; MAX_CORNERS],
    vertices: usize,
    /// Bit `v`: vertex `v` (below [`IN_BITS`]) is listed, at `slot_of[v]`.
    seen: u64,
    slot_of: [u8; IN_BITS as usize],
    /// The corners of face `k` are `corners[corner_start[k]..corner_start[k + 1]]`, as
    /// vertex indices, each with the half-edge that leaves it.
    corners: [u8; MAX_CORNERS],
    half_edges: [u32; MAX_CORNERS],
    corner_start: [u8; HINT_FACES + 1],
}

impl Default for Side {
    fn default() -> Self {
        Side {
            faces: [0; HINT_FACES],
            planes: [(DVec3::ZERO, 0.0); HINT_FACES],
            count: 0,
            ids: [0; MAX_CORNERS],
            points: [DVec3::ZERO; MAX_CORNERS],
            beyond: [0; MAX_CORNERS],
            near: [0; MAX_CORNERS],
            checked: [false; MAX_CORNERS],
            vertices: 0,
            seen: 0,
            slot_of: [0; IN_BITS as usize],
            corners: [0; MAX_CORNERS],
            half_edges: [0; MAX_CORNERS],
            corner_start: [0; HINT_FACES + 1],
        }
    }
}

impl Side {
    /// Lists `faces` of `poly` with their planes (`plane`) and their corners (`point`: a
    /// vertex in B's frame); `false` when they have too many corners.
    fn list(
        &mut self,
        poly: &ConvexPolyhedron,
        faces: &[u16],
        plane: impl Fn(u32) -> (DVec3, f64),
        point: impl Fn(DVec3) -> DVec3,
    ) -> bool {
        self.count = faces.len();
        self.vertices = 0;
        self.seen = 0;
        let half_edges = poly.half_edges();
        let mut corners = 0;
        for (k, &f) in faces.iter().enumerate() {
            let f = u32::from(f);
            self.faces[k] = f;
            self.planes[k] = plane(f);
            self.corner_start[k] = corners as u8;
            for h in poly.faces()[f as usize].half_edges() {
                if corners == MAX_CORNERS {
                    return false;
                }
                let v = half_edges[h].origin;
                // A vertex below `IN_BITS` is found by its bit, another by a search.
                let listed = if v < IN_BITS {
                    ((self.seen >> v) & 1 == 1).then(|| usize::from(self.slot_of[v as usize]))
                } else {
                    self.ids[..self.vertices].iter().position(|&id| id == v)
                };
                let slot = match listed {
                    Some(slot) => slot,
                    None => {
                        let slot = self.vertices;
                        if v < IN_BITS {
                            self.seen |= 1 << v;
                            self.slot_of[v as usize] = slot as u8;
                        }
                        self.ids[slot] = v;
                        self.points[slot] = point(poly.vertices()[v as usize]);
                        self.checked[slot] = false;
                        self.vertices += 1;
                        slot
                    }
                };
                self.corners[corners] = slot as u8;
                self.half_edges[corners] = h as u32;
                corners += 1;
            }
        }
        self.corner_start[faces.len()] = corners as u8;
        true
    }

    /// Measures every vertex against `planes` (the other side's): bit `j` of a vertex's code
    /// when it lies beyond plane `j` by more than `tolerance`, by the arithmetic of
    /// [`TaggedPolygon::clip`], and of its `near` code when it lies within `tolerance` of it.
    fn measure(&mut self, planes: &[(DVec3, f64)], tolerance: f64) {
        for v in 0..self.vertices {
            let x = self.points[v];
            let (mut code, mut near) = (0u16, 0u16);
            for (j, &(normal, offset)) in planes.iter().enumerate() {
                let d = normal.dot(x) - offset;
                code |= u16::from(d > tolerance) << j;
                near |= u16::from(d.abs() <= tolerance) << j;
            }
            self.beyond[v] = code;
            self.near[v] = near;
        }
    }

    /// The corner range of listed face `k`.
    fn corner_range(&self, k: usize) -> std::ops::Range<usize> {
        usize::from(self.corner_start[k])..usize::from(self.corner_start[k + 1])
    }

    /// The planes every corner of listed face `k` lies beyond, and those some corner does.
    fn codes(&self, k: usize) -> (u16, u16) {
        let (mut all, mut any) = (u16::MAX, 0u16);
        for &v in &self.corners[self.corner_range(k)] {
            let code = self.beyond[usize::from(v)];
            all &= code;
            any |= code;
        }
        (all, any)
    }

    /// The other side's planes listed face `k` lies in (bit `j`: every corner within the
    /// tolerance of plane `j`, as [`Side::measure`] found).
    fn in_planes(&self, k: usize) -> u16 {
        self.corners[self.corner_range(k)]
            .iter()
            .fold(u16::MAX, |all, &v| all & self.near[usize::from(v)])
    }
}

/// The listed faces of the grain that stands in for itself (X in the module documentation):
/// their planes in B's frame and the vertex they all meet at, with the edges leaving it
/// when the faces are all the faces around it.
struct StandIn {
    is_a: bool,
    faces: [u32; HINT_FACES],
    planes: [(DVec3, f64); HINT_FACES],
    count: usize,
    /// The vertex they meet at, in B's frame.
    apex_point: DVec3,
    /// When the faces are those around the apex (a cone of `count ≥ 3` faces): the far end
    /// of each edge leaving it, in B's frame, and the face between each edge and the next,
    /// in the order of [`ConvexPolyhedron::vertex_star`].
    ends: [DVec3; HINT_FACES],
    sectors: [u32; HINT_FACES],
    whole_cone: bool,
}

impl StandIn {
    /// Takes the listed `faces` of `poly` (A's when `is_a`) when they meet at a vertex,
    /// and, for a cone of three or more, at one the other grain holds (`in_other`, asked
    /// before anything else is computed); `plane` and `point` give planes and points in B's
    /// frame. `false` (and the stand-in left as it was) when they do not.
    fn fill(
        &mut self,
        poly: &ConvexPolyhedron,
        is_a: bool,
        faces: &[u16],
        plane: impl Fn(u32) -> (DVec3, f64),
        point: impl Fn(DVec3) -> DVec3,
        in_other: impl FnOnce(DVec3) -> bool,
    ) -> bool {
        let half_edges = poly.half_edges();
        let corners = |f: u16| {
            poly.faces()[usize::from(f)]
                .half_edges()
                .map(|h| half_edges[h].origin)
        };
        let Some((&first, rest)) = faces.split_first() else {
            return false;
        };
        // The first corner of the first face that every other face has: on a grain whose
        // vertices are all below `IN_BITS`, from the bits of the corners all faces share.
        let apex = if poly.vertices().len() <= IN_BITS as usize {
            let bits = |f: u16| corners(f).fold(0u64, |bits, v| bits | 1 << v);
            let shared = rest.iter().fold(bits(first), |shared, &f| shared & bits(f));
            corners(first).find(|&v| (shared >> v) & 1 == 1)
        } else {
            corners(first).find(|&v| rest.iter().all(|&f| corners(f).any(|c| c == v)))
        };
        let Some(apex) = apex else {
            return false;
        };
        let apex_point = point(poly.vertices()[apex as usize]);
        if faces.len() >= 3 && !in_other(apex_point) {
            return false;
        }
        self.is_a = is_a;
        self.count = faces.len();
        self.apex_point = apex_point;
        for (k, &f) in faces.iter().enumerate() {
            self.faces[k] = u32::from(f);
            self.planes[k] = plane(u32::from(f));
        }
        // Distinct faces that all have the apex, as many as meet there: all of them.
        let star = poly.vertex_star(apex as usize);
        self.whole_cone = faces.len() >= 3 && star.len() == faces.len();
        if self.whole_cone {
            for (i, s) in star.iter().enumerate() {
                self.ends[i] = point(s.end);
                self.sectors[i] = s.face;
            }
        }
        true
    }
}

impl Default for StandIn {
    fn default() -> Self {
        StandIn {
            is_a: false,
            faces: [0; HINT_FACES],
            planes: [(DVec3::ZERO, 0.0); HINT_FACES],
            count: 0,
            apex_point: DVec3::ZERO,
            ends: [DVec3::ZERO; HINT_FACES],
            sectors: [0; HINT_FACES],
            whole_cone: false,
        }
    }
}

#[cfg(test)]
thread_local! {
    /// How the overlaps of this thread were found, for the tests to see every way taken:
    /// from one grain's parts, of which parts by a cone's section and by clipping, and from
    /// both grains' parts.
    pub(crate) static WAYS: std::cell::Cell<[usize; 4]> = const { std::cell::Cell::new([0; 4]) };
}

/// Counts way `k` of [`WAYS`] (in tests only).
#[inline]
fn count_way(_k: usize) {
    #[cfg(test)]
    WAYS.with(|w| {
        let mut ways = w.get();
        ways[_k] += 1;
        w.set(ways);
    });
}

/// Reused buffers of [`reused`], one set per thread.
#[derive(Default)]
pub(crate) struct ReuseWorkspace {
    a: Side,
    b: Side,
    stand: StandIn,
    part: TaggedPolygon,
    /// The planes of the sides of a face, for [`section_of`].
    sides: Vec<(DVec3, f64)>,
    /// What the last call found (kept here, not returned by value: see [`Reused::start`]).
    found: Reused,
}

/// What [`reused`] found: the boundary sums of A∩B (B's frame), and the faces that bound it.
#[derive(Default)]
pub(crate) struct Reused {
    pub sums: BoundarySums,
    pub kept_a: [u32; HINT_FACES],
    pub kept_b: [u32; HINT_FACES],
    pub count_a: usize,
    pub count_b: usize,
    /// Bit `f`: face `f` (below [`IN_BITS`]) of A, of B, is kept.
    seen_a: u64,
    seen_b: u64,
}

impl Reused {
    /// Starts anew from `sums`, in place: a result built apart and moved out is copied
    /// through memory, some 200 bytes a query.
    fn start(&mut self, sums: BoundarySums) {
        self.sums = sums;
        (self.count_a, self.count_b) = (0, 0);
        (self.seen_a, self.seen_b) = (0, 0);
    }

    /// Keeps `face` of A (`of_a`) or B, once: a face below [`IN_BITS`] is found by its
    /// bit, another by a search.
    fn keep(&mut self, of_a: bool, face: u32) {
        let (kept, count, seen) = if of_a {
            (&mut self.kept_a, &mut self.count_a, &mut self.seen_a)
        } else {
            (&mut self.kept_b, &mut self.count_b, &mut self.seen_b)
        };
        let known = if face < IN_BITS {
            let bit = 1 << face;
            let known = *seen & bit != 0;
            *seen |= bit;
            known
        } else {
            kept[..*count].contains(&face)
        };
        if !known {
            kept[*count] = face;
            *count += 1;
        }
    }
}

/// The grains as the reuse sees them: everything in B's frame, with the tolerances.
struct Pair<'p> {
    a: &'p ConvexPolyhedron,
    b: &'p ConvexPolyhedron,
    a_to_b: &'p Iso,
    b_to_a: Iso,
    /// Below this distance a corner counts as on a plane (the clipping's tolerance).
    tolerance: f64,
    /// How far beyond the other grain a corner may lie and still count as in it.
    margin: f64,
}

impl Pair<'_> {
    /// The grain A when `of_a`, else B.
    fn grain(&self, of_a: bool) -> &ConvexPolyhedron {
        if of_a { self.a } else { self.b }
    }

    /// Whether `x` (B's frame), a corner of a part of one grain tagged `tag`, lies in the
    /// other grain (A when `in_a`): a vertex of its own grain (tag [`ORIGINAL`]) against
    /// the whole other grain, by a climb from `start`; a corner cut out by the plane of the
    /// other grain's face `tag` within that face. Inlined, as [`beyond`] is.
    #[inline]
    fn inside(&self, in_a: bool, x: DVec3, tag: u32, start: &mut u32) -> bool {
        if tag & ORIGINAL != 0 {
            self.beyond(in_a, x, start) <= self.margin
        } else if in_a {
            in_face(self.a, tag, self.b_to_a.point(x), self.margin)
        } else {
            in_face(self.b, tag, x, self.margin)
        }
    }

    /// How far `x` (B's frame) lies beyond the grain (A when `in_a`): negative inside (see
    /// [`beyond`]; the climb starts from `start`).
    #[inline]
    fn beyond(&self, in_a: bool, x: DVec3, start: &mut u32) -> f64 {
        if in_a {
            beyond(self.a, self.b_to_a.point(x), start)
        } else {
            beyond(self.b, x, start)
        }
    }
}

/// The boundary sums of A∩B from the faces in `faces` (see the module documentation);
/// `None` when there are none or a check fails.
pub(crate) fn reused<'w>(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    a_to_b: &Iso,
    faces: &BoundingFaces,
    w: &'w mut ReuseWorkspace,
) -> Option<&'w Reused> {
    let (faces_a, faces_b) = faces.on(a, b)?;
    let scale = a.diameter_bound() + b.diameter_bound();
    let pair = Pair {
        a,
        b,
        a_to_b,
        b_to_a: a_to_b.inverse(),
        tolerance: 1e-12 * scale,
        margin: 1e-9 * scale,
    };
    let plane_a = |f: u32| {
        let face = a.faces()[f as usize];
        let normal = a_to_b.vector(face.normal);
        let on_plane = a_to_b.point(face.normal * face.offset);
        (normal, normal.dot(on_plane))
    };
    let plane_b = |g: u32| {
        let face = b.faces()[g as usize];
        (face.normal, face.offset)
    };
    let ReuseWorkspace {
        a: side_a,
        b: side_b,
        stand,
        part,
        sides,
        found,
    } = w;
    // The grain whose listed faces stand in for it: the one with more of them (fewer parts
    // to clip), B when both have as many.
    let x_is_a_first = faces_a.len() > faces_b.len();
    for x_is_a in [x_is_a_first, !x_is_a_first] {
        let (y_faces, y) = if x_is_a {
            (faces_b, &mut *side_b)
        } else {
            (faces_a, &mut *side_a)
        };
        // The apex of a cone must lie in Y, clearly, for Y's surface within it to be one
        // piece.
        let in_y = |apex: DVec3| {
            let mut start = u32::from(y_faces[0]);
            pair.beyond(!x_is_a, apex, &mut start) < -pair.margin
        };
        let stands = if x_is_a {
            stand.fill(a, true, faces_a, plane_a, |x| a_to_b.point(x), in_y)
        } else {
            stand.fill(b, false, faces_b, plane_b, |x| x, in_y)
        };
        if !stands {
            continue;
        }
        let listed = if x_is_a {
            y.list(b, y_faces, plane_b, |x| x)
        } else {
            y.list(a, y_faces, plane_a, |x| a_to_b.point(x))
        };
        if !listed {
            return None;
        }
        if let Some(outcome) = one_sided(&pair, stand, y, part, sides, found) {
            count_way(0);
            return outcome.then_some(&*found);
        }
    }
    if !side_a.list(a, faces_a, plane_a, |x| a_to_b.point(x))
        || !side_b.list(b, faces_b, plane_b, |x| x)
    {
        return None;
    }
    count_way(3);
    two_sided(&pair, side_a, side_b, part, found).map(|()| &*found)
}

/// The overlap from the parts of Y's listed faces alone, X's listed faces standing in for X
/// (see the module documentation), left in `found`: `None` when that does not apply (a
/// face of Y lies in a plane of X), `Some(false)` when a check fails.
fn one_sided(
    pair: &Pair,
    x: &StandIn,
    y: &mut Side,
    part: &mut TaggedPolygon,
    sides: &mut Vec<(DVec3, f64)>,
    found: &mut Reused,
) -> Option<bool> {
    let x_planes = &x.planes[..x.count];
    y.measure(x_planes, pair.tolerance);
    let x_bits = ((1u32 << x.count) - 1) as u16;
    let coplanar = (0..y.count).any(|k| y.in_planes(k) & x_bits != 0);
    if coplanar {
        return None;
    }
    let mut started = false;
    let mut start = x.faces[0];
    let y_is_a = !x.is_a;
    let y_poly = pair.grain(y_is_a);
    for k in 0..y.count {
        let (all, any) = y.codes(k);
        if all != 0 {
            continue;
        }
        let has_part = if x.whole_cone {
            section_of(pair, x, y, k, part, sides)
        } else {
            None
        };
        count_way(if has_part.is_some() { 1 } else { 2 });
        let has_part = match has_part {
            Some(has_part) => has_part,
            None => match clipped(
                pair, y_is_a, y, k, any, &x.faces, x_planes, part, &mut start,
            ) {
                Some(has_part) => has_part,
                None => return Some(false),
            },
        };
        if !has_part {
            continue;
        }
        // Every vertex of the face within the cone is a corner of its part, and must lie
        // in X.
        for c in y.corner_range(k) {
            let v = usize::from(y.corners[c]);
            if y.beyond[v] == 0 && !y.checked[v] {
                y.checked[v] = true;
                if !pair.inside(x.is_a, y.points[v], ORIGINAL, &mut start) {
                    return Some(false);
                }
            }
        }
        // Every side along an edge of Y must have the face across it listed (a side no
        // longer than the margin is a corner).
        let points = part.points();
        for (i, &label) in part.labels().iter().enumerate() {
            if label & ORIGINAL == 0 {
                continue;
            }
            let h = (label & !ORIGINAL) as usize;
            let across = y_poly.half_edges()[y_poly.half_edges()[h].twin as usize].face;
            let (p, q) = (points[i], points[(i + 1) % points.len()]);
            if !y.faces[..y.count].contains(&across)
                && p.distance_squared(q) > pair.margin * pair.margin
            {
                return Some(false);
            }
        }
        if !started {
            found.start(BoundarySums::about(x.apex_point));
            started = true;
        }
        // The faces of X whose planes bound the part (its sides along them) bound A∩B.
        for &label in part.labels() {
            if label & ORIGINAL == 0 {
                found.keep(x.is_a, label);
            }
        }
        found.keep(y_is_a, y.faces[k]);
        found.sums.add(points);
        if y_is_a {
            found.sums.add_contact(points);
        } else {
            found.sums.add_contact_of_b(points);
        }
    }
    Some(started && found.count_a > 0 && found.count_b > 0)
}

/// The part of Y's listed face `k` within X's cone by its section: the points where the
/// edges leaving the apex cross the face's plane, in order, clipped by the face's own sides
/// (the section's sides run in X's faces, and its corners on X's edges). `Some(false)` when
/// the part is empty; `None` when an edge does not reach the plane clearly (the part is
/// then found by clipping the face).
fn section_of(
    pair: &Pair,
    x: &StandIn,
    y: &Side,
    k: usize,
    part: &mut TaggedPolygon,
    sides: &mut Vec<(DVec3, f64)>,
) -> Option<bool> {
    let (normal, offset) = y.planes[k];
    let apex = x.apex_point;
    let depth = normal.dot(apex) - offset;
    let n = x.count;
    let mut distances = [0.0; HINT_FACES];
    for (d, &end) in distances.iter_mut().zip(&x.ends[..n]) {
        *d = normal.dot(end) - offset;
        // Also a NaN: only an edge clearly through the plane gives a corner.
        if (*d).partial_cmp(&pair.tolerance) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
    }
    if depth.partial_cmp(&0.0) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    // The edges leave the apex counter-clockwise seen from outside X, from within Y: seen
    // from outside Y the section runs clockwise, so it is taken in reverse to face out of Y.
    part.start_labelled((0..n).rev().map(|i| {
        let end = x.ends[i];
        let corner = apex + (end - apex) * (depth / (depth - distances[i]));
        let sector = x.sectors[(i + n - 1) % n];
        (corner, sector, sector)
    }));
    let y_poly = pair.grain(!x.is_a);
    let face = y.faces[k];
    // The sides' planes in B's frame, all computed before the first clip: a plane just
    // stored and read back at another width stalls the read (store forwarding fails).
    sides.clear();
    sides.extend(y_poly.face_side_planes(face as usize).iter().map(|side| {
        let (normal, point) = if x.is_a {
            (side.normal, side.point)
        } else {
            (
                pair.a_to_b.vector(side.normal),
                pair.a_to_b.point(side.point),
            )
        };
        (normal, normal.dot(point))
    }));
    let half_edges = y_poly.faces()[face as usize].half_edges();
    for (h, plane) in half_edges.zip(sides.iter()) {
        let label = ORIGINAL | h as u32;
        if !part.clip(|p| plane.0.dot(p) - plane.1, label, pair.tolerance) {
            return Some(false);
        }
    }
    Some(true)
}

/// The part of listed face `k` of `own` (A's when `own_is_a`) within the other grain's
/// planes `planes` (of its faces `faces`), left in `part`: the face clipped by those of the
/// planes some vertex of it lies beyond (`any`), every corner cut out checked to lie in the
/// other grain. `Some(false)` when the part is empty, `None` when a corner lies outside the
/// other grain.
#[allow(clippy::too_many_arguments)]
fn clipped(
    pair: &Pair,
    own_is_a: bool,
    own: &Side,
    k: usize,
    mut any: u16,
    faces: &[u32],
    planes: &[(DVec3, f64)],
    part: &mut TaggedPolygon,
    start: &mut u32,
) -> Option<bool> {
    part.start_labelled(own.corner_range(k).map(|c| {
        let v = usize::from(own.corners[c]);
        (
            own.points[v],
            ORIGINAL | v as u32,
            ORIGINAL | own.half_edges[c],
        )
    }));
    while any != 0 {
        let j = any.trailing_zeros() as usize;
        any &= any - 1;
        // The plane read where it is kept, not copied out first: a copy just stored and
        // read back at another width stalls the load (store forwarding fails).
        let plane = &planes[j];
        if !part.clip(|x| plane.0.dot(x) - plane.1, faces[j], pair.tolerance) {
            return Some(false);
        }
    }
    for (&x, &tag) in part.points().iter().zip(part.tags()) {
        if tag & ORIGINAL == 0 && !pair.inside(!own_is_a, x, tag, start) {
            return None;
        }
    }
    Some(true)
}

/// The overlap from both grains' parts, checked to close, left in `found`; `None` when a
/// check fails.
fn two_sided(
    pair: &Pair,
    side_a: &mut Side,
    side_b: &mut Side,
    part: &mut TaggedPolygon,
    found: &mut Reused,
) -> Option<()> {
    side_a.measure(&side_b.planes[..side_b.count], pair.tolerance);
    side_b.measure(&side_a.planes[..side_a.count], pair.tolerance);
    found.start(BoundarySums::default());
    // The climbs that check vertices start where the first listed face of the other grain
    // is (near the contact).
    let (mut start_a, mut start_b) = (side_a.faces[0], side_b.faces[0]);
    let mut magnitude = 0.0;
    for k in 0..side_a.count {
        if !part_of(pair, true, side_a, side_b, k, part, &mut start_b)? {
            continue;
        }
        found.keep(true, side_a.faces[k]);
        found.sums.add(part.points());
        // A face of A lying in a face of B with the same orientation is where the grains sit
        // flush side by side: it bounds A∩B, but no contact acts across it (and the face of
        // B there closes the boundary instead).
        let normal = side_a.planes[k].0;
        let in_planes = side_a.in_planes(k);
        let flush = (0..side_b.count)
            .any(|j| (in_planes >> j) & 1 == 1 && side_b.planes[j].0.dot(normal) > 1.0 - 1e-12);
        if !flush {
            let vector_area = found.sums.add_contact(part.points());
            magnitude += vector_area.length();
        }
    }
    let mut closure = DVec3::ZERO;
    for k in 0..side_b.count {
        if !part_of(pair, false, side_b, side_a, k, part, &mut start_a)? {
            continue;
        }
        found.keep(false, side_b.faces[k]);
        // A face of B lying in a face of A with the same orientation is on A's surface and
        // already counted as A's part; counting it twice would double that boundary.
        let normal = pair.b_to_a.vector(side_b.planes[k].0);
        let in_planes = side_b.in_planes(k);
        let lies_in_a = (0..side_a.count).any(|i| {
            (in_planes >> i) & 1 == 1
                && pair.a.faces()[side_a.faces[i] as usize].normal.dot(normal) > 1.0 - 1e-12
        });
        let vector_area = polygon_area_vector(part.points());
        closure += vector_area;
        magnitude += vector_area.length();
        if !lies_in_a {
            found.sums.add(part.points());
        }
    }
    // The parts must close: ∂A∩∂B may have gained a loop the listed faces do not reach (a
    // corner of one grain poking out through a face of the other), and the vector area of a
    // surface with such a hole is that of the hole's rim.
    if (closure + found.sums.contact_area).length() > 1e-9 * magnitude {
        return None;
    }
    Some(())
}

/// The part of listed face `k` of `own` (A's when `own_is_a`) within the other grain, left
/// in `part` (see [`clipped`]), its vertices of its own grain checked too, once per query.
/// `Some(false)` when the part is empty, `None` when a corner lies outside the other grain.
fn part_of(
    pair: &Pair,
    own_is_a: bool,
    own: &mut Side,
    other: &Side,
    k: usize,
    part: &mut TaggedPolygon,
    start: &mut u32,
) -> Option<bool> {
    let (all, any) = own.codes(k);
    if all != 0 {
        return Some(false);
    }
    let planes = &other.planes[..other.count];
    if !clipped(
        pair,
        own_is_a,
        own,
        k,
        any,
        &other.faces,
        planes,
        part,
        start,
    )? {
        return Some(false);
    }
    for (&x, &tag) in part.points().iter().zip(part.tags()) {
        if tag & ORIGINAL != 0 {
            let v = (tag & !ORIGINAL) as usize;
            if !own.checked[v] {
                own.checked[v] = true;
                if !pair.inside(!own_is_a, x, ORIGINAL, start) {
                    return None;
                }
            }
        }
    }
    Some(true)
}
