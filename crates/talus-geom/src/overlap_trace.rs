//! The faces that bound A∩B, found by walking the intersection curve ∂A∩∂B (the plan of
//! thesis §4.2 and §5, design §3: start from a crossing and walk the two surface graphs
//! only where they intersect).
//!
//! Where neither grain holds the other, ∂A∩∂B is one closed curve through the points where
//! an edge of one grain crosses a face of the other (*crossings*). Between two crossings it
//! runs along the line where a face `f` of A meets a face `g` of B, and leaves the pair
//! where that line leaves `f` (through an edge of A: the next pair is the face across it
//! and `g`) or leaves `g` (through an edge of B). Walking it from one crossing visits every
//! pair once. What it yields:
//!
//! * the faces of A the curve runs through, each with the faces of B it meets there: the
//!   part of such a face inside B is the face clipped by the planes of those faces alone (the
//!   boundary of a convex polygon `f ∩ B` inside `f` lies on them);
//! * likewise the faces of B;
//! * the faces wholly inside the other grain, by flood fill from the curve's faces across
//!   edges that lie inside (an edge the curve does not cross is wholly inside or outside).
//!
//! The work follows the size of A∩B, not the vertex counts. Anything close to a degenerate
//! position (a curve passing within round-off of a vertex or an edge, parallel faces, a
//! corner within round-off of a plane) gives up, and the caller clips the candidate faces
//! instead (see [`crate::overlap`]). The result does not depend on where the walk starts:
//! the faces are listed in index order and each face's planes too.

use glam::DVec3;

use crate::iso::Iso;
use crate::polyhedron::ConvexPolyhedron;

/// A point of the intersection curve: an edge of one grain through a face of the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Crossing {
    /// The edge.
    pub edge: u32,
    /// The face of the other grain.
    pub face: u32,
    /// Whether the edge is grain a's (and the face b's).
    pub edge_of_a: bool,
}

/// One face of a grain that bounds A∩B: its index, and the range of [`Trace::cuts`] holding
/// the faces of the other grain whose planes cut it (empty for a face wholly inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartFace {
    pub face: u32,
    pub cuts: (u32, u32),
}

/// Per-polyhedron marks, reset in O(1) by a new generation.
#[derive(Default)]
struct Marks {
    /// Per vertex: generation of `position`.
    placed: Vec<u32>,
    /// Per vertex: position in B's frame.
    position: Vec<DVec3>,
    /// Per vertex: generation of `inside`.
    classified: Vec<u32>,
    inside: Vec<bool>,
    /// Per vertex: generation in which it was checked against the other grain.
    checked: Vec<u32>,
    /// Per edge: generation in which the curve crossed it.
    crossed: Vec<u32>,
    /// Per face: generation in which it was found to bound A∩B.
    face: Vec<u32>,
    /// Per face: its index in the part list (valid with `face`).
    part: Vec<u32>,
}

impl Marks {
    fn reset(&mut self, poly: &ConvexPolyhedron, generation: u32) {
        let (v, e, f) = poly.counts();
        if self.placed.len() < v {
            self.placed.resize(v, 0);
            self.position.resize(v, DVec3::ZERO);
            self.classified.resize(v, 0);
            self.inside.resize(v, false);
            self.checked.resize(v, 0);
        }
        if self.crossed.len() < e {
            self.crossed.resize(e, 0);
        }
        if self.face.len() < f {
            self.face.resize(f, 0);
            self.part.resize(f, 0);
        }
        if generation == 1 {
            self.placed.fill(0);
            self.classified.fill(0);
            self.checked.fill(0);
            self.crossed.fill(0);
            self.face.fill(0);
        }
    }
}

/// Reused buffers of the walk, and what it found.
#[derive(Default)]
pub(crate) struct Trace {
    generation: u32,
    marks_a: Marks,
    marks_b: Marks,
    /// Pairs (face of A, face of B) the curve runs along.
    pairs: Vec<(u32, u32)>,
    queue: Vec<u32>,
    /// The faces of A and of B that bound A∩B, in index order.
    pub parts_a: Vec<PartFace>,
    pub parts_b: Vec<PartFace>,
    /// The cutting faces of the other grain, by [`PartFace::cuts`] ranges, in index order.
    pub cuts: Vec<u32>,
}

impl Trace {
    /// Starts a new query of `a` and `b`: no vertex checked, no part listed.
    pub fn begin(&mut self, a: &ConvexPolyhedron, b: &ConvexPolyhedron) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.generation = 1;
        }
        self.marks_a.reset(a, self.generation);
        self.marks_b.reset(b, self.generation);
        self.parts_a.clear();
        self.parts_b.clear();
        self.cuts.clear();
    }

    /// Whether vertex `v` (of grain a when `of_a`, else b) is checked for the first time
    /// since the last walk; marks it checked.
    pub fn first_check(&mut self, of_a: bool, v: u32) -> bool {
        let marks = if of_a {
            &mut self.marks_a
        } else {
            &mut self.marks_b
        };
        let first = marks.checked[v as usize] != self.generation;
        marks.checked[v as usize] = self.generation;
        first
    }
}

/// The two grains as the walk sees them: everything in B's frame.
struct Scene<'p> {
    a: &'p ConvexPolyhedron,
    b: &'p ConvexPolyhedron,
    a_to_b: Iso,
    b_to_a: Iso,
    /// Below this distance a point counts as on a plane (and the walk gives up).
    margin: f64,
}

impl Scene<'_> {
    /// Plane of A's face `f` in B's frame: unit normal and offset.
    #[inline]
    fn plane_a(&self, f: u32) -> (DVec3, f64) {
        let face = &self.a.faces()[f as usize];
        (
            self.a_to_b.vector(face.normal),
            face.offset - face.normal.dot(self.b_to_a.translation),
        )
    }

    #[inline]
    fn plane_b(&self, g: u32) -> (DVec3, f64) {
        let face = &self.b.faces()[g as usize];
        (face.normal, face.offset)
    }
}

/// A's vertex `v` in B's frame, transformed once per walk.
#[inline]
fn vertex_a(s: &Scene, marks: &mut Marks, generation: u32, v: u32) -> DVec3 {
    let v = v as usize;
    if marks.placed[v] != generation {
        marks.placed[v] = generation;
        marks.position[v] = s.a_to_b.point(s.a.vertices()[v]);
    }
    marks.position[v]
}

/// The point where `edge` (of a when `edge_of_a`) crosses the plane `(normal, offset)`,
/// if its ends lie clearly on either side.
fn edge_through_plane(
    s: &Scene,
    marks_a: &mut Marks,
    generation: u32,
    c: Crossing,
    (normal, offset): (DVec3, f64),
) -> Option<DVec3> {
    let (u, w) = if c.edge_of_a {
        let [i, j] = s.a.edges()[c.edge as usize];
        (
            vertex_a(s, marks_a, generation, i),
            vertex_a(s, marks_a, generation, j),
        )
    } else {
        let [i, j] = s.b.edges()[c.edge as usize];
        (s.b.vertices()[i as usize], s.b.vertices()[j as usize])
    };
    let (du, dw) = (normal.dot(u) - offset, normal.dot(w) - offset);
    let clear = du.abs() > s.margin && dw.abs() > s.margin && (du < 0.0) != (dw < 0.0);
    clear.then(|| u + (w - u) * (du / (du - dw)))
}

/// The point of a crossing, if it is one: the edge's ends clearly on either side of the
/// face's plane, and the point clearly inside the face.
fn crossing_point(s: &Scene, marks_a: &mut Marks, generation: u32, c: Crossing) -> Option<DVec3> {
    let valid = if c.edge_of_a {
        (c.edge as usize) < s.a.edges().len() && (c.face as usize) < s.b.faces().len()
    } else {
        (c.edge as usize) < s.b.edges().len() && (c.face as usize) < s.a.faces().len()
    };
    if !valid {
        return None;
    }
    let plane = if c.edge_of_a {
        s.plane_b(c.face)
    } else {
        s.plane_a(c.face)
    };
    let p = edge_through_plane(s, marks_a, generation, c, plane)?;
    let inside = if c.edge_of_a {
        s.b.face_side_planes(c.face as usize)
            .iter()
            .all(|side| side.normal.dot(p - side.point) < -s.margin)
    } else {
        let q = s.b_to_a.point(p);
        s.a.face_side_planes(c.face as usize)
            .iter()
            .all(|side| side.normal.dot(q - side.point) < -s.margin)
    };
    inside.then_some(p)
}

/// What bounds the line of a pair of faces at one end: an edge of A or of B.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Bound {
    edge: u32,
    of_a: bool,
}

/// The extreme parameters along the line on one side (lower or upper bounds): the binding
/// one, what binds it, and the runner-up (to detect ties).
struct End {
    t: f64,
    by: Option<Bound>,
    second: f64,
}

impl End {
    fn new(t: f64) -> Self {
        End {
            t,
            by: None,
            second: t,
        }
    }

    /// Takes bound `t` (by `by`); `tighter(x, y)` when `x` binds more than `y`.
    #[inline]
    fn offer(&mut self, t: f64, by: Bound, tighter: impl Fn(f64, f64) -> bool) {
        if tighter(t, self.t) {
            self.second = self.t;
            self.t = t;
            self.by = Some(by);
        } else if tighter(t, self.second) {
            self.second = t;
        }
    }
}

/// Walks the curve from `start` and fills `trace`; `false` when it gives up.
///
/// `p` is the start's point (B's frame). The walk takes the pairs one after the other; in
/// each it bounds the line by the side planes of both faces (thesis §4.2.2's Voronoi side
/// planes, here the faces' own edges) around the crossing it came from, which binds at one
/// end, and leaves by the edge binding at the other.
fn walk(s: &Scene, start: Crossing, p: DVec3, t: &mut Trace) -> bool {
    let generation = t.generation;
    t.pairs.clear();
    let (edges_a, edges_b) = (s.a.edges().len(), s.b.edges().len());
    let limit = 2 * (edges_a + edges_b) + 8;
    // The first pair: the start's face and a face at its edge.
    let (mut f, mut g) = if start.edge_of_a {
        (s.a.edge_faces(start.edge as usize)[0], start.face)
    } else {
        (start.face, s.b.edge_faces(start.edge as usize)[0])
    };
    let mut from = start;
    let mut point = p;
    loop {
        if t.pairs.len() > limit {
            return false;
        }
        t.pairs.push((f, g));
        if from.edge_of_a {
            t.marks_a.crossed[from.edge as usize] = generation;
        } else {
            t.marks_b.crossed[from.edge as usize] = generation;
        }
        let (normal_f, offset_f) = s.plane_a(f);
        let (normal_g, offset_g) = s.plane_b(g);
        let Some(direction) = normal_f.cross(normal_g).try_normalize() else {
            return false;
        };
        if normal_f.cross(normal_g).length() < 1e-6 {
            return false;
        }
        let (point_a, direction_a) = (s.b_to_a.point(point), s.b_to_a.vector(direction));
        let mut low = End::new(f64::NEG_INFINITY);
        let mut high = End::new(f64::INFINITY);
        let sides =
            s.a.face_side_planes(f as usize)
                .iter()
                .map(|side| {
                    (
                        side.normal.dot(point_a - side.point),
                        side.normal.dot(direction_a),
                        Bound {
                            edge: side.edge,
                            of_a: true,
                        },
                    )
                })
                .chain(s.b.face_side_planes(g as usize).iter().map(|side| {
                    (
                        side.normal.dot(point - side.point),
                        side.normal.dot(direction),
                        Bound {
                            edge: side.edge,
                            of_a: false,
                        },
                    )
                }));
        // Inside a face: c0 + t·c1 ≤ 0 for each of its side planes.
        for (c0, c1, by) in sides {
            if c1 > 1e-12 {
                high.offer(-c0 / c1, by, |x, y| x < y);
            } else if c1 < -1e-12 {
                low.offer(-c0 / c1, by, |x, y| x > y);
            } else if c0 > 0.0 {
                return false;
            }
        }
        let came = Bound {
            edge: from.edge,
            of_a: from.edge_of_a,
        };
        let next = if low.by == Some(came) {
            &high
        } else if high.by == Some(came) {
            &low
        } else {
            return false;
        };
        let Some(by) = next.by else {
            return false;
        };
        if high.t - low.t <= s.margin || (next.t - next.second).abs() <= s.margin {
            return false;
        }
        // The crossing where the line leaves the pair, and the next pair.
        let crossing = if by.of_a {
            let [left, right] = s.a.edge_faces(by.edge as usize);
            let c = Crossing {
                edge: by.edge,
                face: g,
                edge_of_a: true,
            };
            f = if left == f { right } else { left };
            c
        } else {
            let [left, right] = s.b.edge_faces(by.edge as usize);
            let c = Crossing {
                edge: by.edge,
                face: f,
                edge_of_a: false,
            };
            g = if left == g { right } else { left };
            c
        };
        if crossing == start {
            return true;
        }
        let plane = if by.of_a {
            (normal_g, offset_g)
        } else {
            (normal_f, offset_f)
        };
        let Some(q) = edge_through_plane(s, &mut t.marks_a, generation, crossing, plane) else {
            return false;
        };
        point = q;
        from = crossing;
    }
}

/// Classifies the corners of the faces the curve runs through (inside the other grain
/// when inside the planes of the faces that cut it there), then collects the faces wholly
/// inside by flood fill across uncrossed edges with inner ends. `pairs` must be sorted by
/// this grain's face. Returns `false` when a corner is too close to a plane to tell, or the
/// classification contradicts itself.
#[allow(clippy::too_many_arguments)]
fn collect(
    poly: &ConvexPolyhedron,
    own_is_a: bool,
    s: &Scene,
    pairs: &[(u32, u32)],
    marks: &mut Marks,
    generation: u32,
    queue: &mut Vec<u32>,
    parts: &mut Vec<PartFace>,
    cuts: &mut Vec<u32>,
) -> bool {
    parts.clear();
    let mut k = 0;
    while k < pairs.len() {
        let face = pairs[k].0;
        let begin = cuts.len() as u32;
        while k < pairs.len() && pairs[k].0 == face {
            if cuts.len() as u32 == begin || *cuts.last().unwrap_or(&u32::MAX) != pairs[k].1 {
                cuts.push(pairs[k].1);
            }
            k += 1;
        }
        marks.face[face as usize] = generation;
        marks.part[face as usize] = parts.len() as u32;
        parts.push(PartFace {
            face,
            cuts: (begin, cuts.len() as u32),
        });
    }
    // The corners of the curve's faces.
    let half_edges = poly.half_edges();
    for part in parts.iter() {
        let planes = &cuts[part.cuts.0 as usize..part.cuts.1 as usize];
        for h in poly.faces()[part.face as usize].half_edges() {
            let v = half_edges[h].origin;
            let x = if own_is_a {
                vertex_a(s, marks, generation, v)
            } else {
                poly.vertices()[v as usize]
            };
            let mut worst = f64::NEG_INFINITY;
            for &o in planes {
                let (normal, offset) = if own_is_a { s.plane_b(o) } else { s.plane_a(o) };
                worst = worst.max(normal.dot(x) - offset);
            }
            if worst.abs() <= s.margin {
                return false;
            }
            let inside = worst < 0.0;
            let v = v as usize;
            if marks.classified[v] == generation {
                if marks.inside[v] != inside {
                    return false;
                }
            } else {
                marks.classified[v] = generation;
                marks.inside[v] = inside;
            }
        }
    }
    // Flood fill from the curve's faces across inner, uncrossed edges.
    queue.clear();
    for part in parts.iter() {
        let face = part.face;
        for h in poly.faces()[face as usize].half_edges() {
            let half = half_edges[h];
            if marks.crossed[half.edge as usize] == generation {
                continue;
            }
            let (u, w) = (
                half.origin as usize,
                half_edges[half.next as usize].origin as usize,
            );
            if marks.inside[u] != marks.inside[w] {
                return false;
            }
            let next = half_edges[half.twin as usize].face;
            if marks.inside[u] && marks.face[next as usize] != generation {
                marks.face[next as usize] = generation;
                queue.push(next);
            }
        }
    }
    let limit = poly.faces().len();
    let mut inner = Vec::new();
    std::mem::swap(&mut inner, queue);
    let mut i = 0;
    while i < inner.len() {
        if inner.len() > limit {
            *queue = inner;
            return false;
        }
        let face = inner[i];
        i += 1;
        for h in poly.faces()[face as usize].half_edges() {
            let half = half_edges[h];
            if marks.crossed[half.edge as usize] == generation {
                *queue = inner;
                return false;
            }
            let next = half_edges[half.twin as usize].face;
            if marks.face[next as usize] != generation {
                marks.face[next as usize] = generation;
                inner.push(next);
            }
        }
    }
    let end = cuts.len() as u32;
    parts.extend(inner.iter().map(|&face| PartFace {
        face,
        cuts: (end, end),
    }));
    *queue = inner;
    parts.sort_unstable_by_key(|p| p.face);
    true
}

/// Walks the intersection curve from the first of `starts` that is a crossing, and lists
/// the faces bounding A∩B into `trace`; `false` when none is a crossing or the walk gives
/// up. Which start is used does not change the lists.
pub(crate) fn trace(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    a_to_b: &Iso,
    starts: &[Crossing],
    trace: &mut Trace,
) -> Option<Crossing> {
    trace.begin(a, b);
    let generation = trace.generation;
    let s = Scene {
        a,
        b,
        a_to_b: *a_to_b,
        b_to_a: a_to_b.inverse(),
        margin: 1e-9 * (a.diameter_bound() + b.diameter_bound()),
    };
    let (start, p) = starts
        .iter()
        .find_map(|&c| crossing_point(&s, &mut trace.marks_a, generation, c).map(|p| (c, p)))?;
    if !walk(&s, start, p, trace) {
        return None;
    }
    let Trace {
        marks_a,
        marks_b,
        pairs,
        queue,
        parts_a,
        parts_b,
        cuts,
        ..
    } = trace;
    cuts.clear();
    pairs.sort_unstable();
    if !collect(
        a, true, &s, pairs, marks_a, generation, queue, parts_a, cuts,
    ) {
        return None;
    }
    for pair in pairs.iter_mut() {
        *pair = (pair.1, pair.0);
    }
    pairs.sort_unstable();
    if !collect(
        b, false, &s, pairs, marks_b, generation, queue, parts_b, cuts,
    ) {
        return None;
    }
    Some(start)
}
