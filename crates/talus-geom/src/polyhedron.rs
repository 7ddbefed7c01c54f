//! The convex polyhedron: vertices, edges and faces with half-edge adjacency.

use std::collections::HashMap;

use glam::DVec3;

use crate::bounds::Aabb;
use crate::error::GeomError;

/// One directed side of an edge, as it runs counter-clockwise (seen from outside) around
/// the boundary of its face.
///
/// The half-edges of a face are stored one after another in the order of its loop, so the
/// successor of half-edge `h` in face `f` is `h + 1`, wrapping to `f.first_half_edge`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HalfEdge {
    /// The vertex this half-edge starts at.
    pub origin: u32,
    /// The opposite half-edge: same edge, other face, other direction.
    pub twin: u32,
    /// The next half-edge around the same face.
    pub next: u32,
    /// The previous half-edge around the same face.
    pub prev: u32,
    /// The face on the left of this half-edge (its face).
    pub face: u32,
    /// The undirected edge this half-edge belongs to.
    pub edge: u32,
}

/// A planar convex face.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Face {
    /// Outward unit normal.
    pub normal: DVec3,
    /// Plane offset: a point `x` of the face satisfies `normal · x = offset`.
    pub offset: f64,
    /// First of the face's half-edges (they are contiguous).
    pub first_half_edge: u32,
    /// Number of vertices (and half-edges) of the face.
    pub vertex_count: u32,
}

impl Face {
    /// Index range of the face's half-edges.
    #[must_use]
    pub fn half_edges(&self) -> std::ops::Range<usize> {
        let first = self.first_half_edge as usize;
        first..first + self.vertex_count as usize
    }

    /// Signed distance of a point from the face's plane, positive outside.
    #[must_use]
    pub fn signed_distance(&self, point: DVec3) -> f64 {
        self.normal.dot(point) - self.offset
    }
}

/// Everything the closest-feature walk reads about one edge, packed into one record so that
/// a region test touches a few adjacent cache lines instead of a dozen arrays. All values are
/// copies (or exact negations) of the polyhedron's own data.
///
/// The edge runs from `tail` to `head` along its half-edge `h = edge_half_edge(e)`; its
/// *left* face is the face of `h`, its *right* face that of `h`'s twin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EdgeRecord {
    /// Position of the tail vertex.
    pub tail: DVec3,
    /// Position of the head vertex.
    pub head: DVec3,
    /// Unit direction from tail to head: `half_edge_direction(h)`.
    pub direction: DVec3,
    /// Normal of the edge region's plane towards the left face: `−half_edge_side(h)`.
    pub left_side: DVec3,
    /// Normal of the edge region's plane towards the right face: `−half_edge_side(twin)`.
    pub right_side: DVec3,
    /// Index of the tail vertex.
    pub tail_id: u32,
    /// Index of the head vertex.
    pub head_id: u32,
    /// Index of the left face.
    pub left_face: u32,
    /// Index of the right face.
    pub right_face: u32,
}

/// The side plane of a face's Voronoi prism through one of its half-edges, with what the walk
/// needs about that half-edge (indexed like the half-edges, so a face's are contiguous).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SidePlane {
    /// `half_edge_side(h)`.
    pub normal: DVec3,
    /// Position of the half-edge's origin.
    pub point: DVec3,
    /// The undirected edge of the half-edge.
    pub edge: u32,
}

/// One edge leaving a vertex, in the rotational order of [`ConvexPolyhedron::vertex_half_edges`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StarEdge {
    /// `half_edge_direction(h)` of the outgoing half-edge `h`.
    pub direction: DVec3,
    /// Position of the vertex at the other end.
    pub end: DVec3,
    /// The undirected edge.
    pub edge: u32,
    /// The vertex at the other end.
    pub end_vertex: u32,
    /// The face on the left of the outgoing half-edge.
    pub face: u32,
}

/// A convex polyhedron with planar faces and half-edge adjacency.
///
/// Built by [`ConvexPolyhedron::from_points`]. Coordinates are those of the input points
/// (no re-centring); faces are planar convex polygons, counter-clockwise seen from outside.
/// Euler's formula `V − E + F = 2` holds for every polyhedron.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvexPolyhedron {
    vertices: Vec<DVec3>,
    half_edges: Vec<HalfEdge>,
    faces: Vec<Face>,
    /// One outgoing half-edge per vertex.
    vertex_half_edge: Vec<u32>,
    /// The two vertices of every undirected edge, and one of its half-edges.
    edges: Vec<[u32; 2]>,
    edge_half_edge: Vec<u32>,
    /// Per half-edge: unit direction from its origin to its end.
    half_edge_direction: Vec<DVec3>,
    /// Per half-edge: length.
    half_edge_length: Vec<f64>,
    /// Per half-edge: unit normal of the side plane of its face's Voronoi prism,
    /// `direction × face normal`, pointing away from the face.
    half_edge_side: Vec<DVec3>,
    /// Bounding box in the polyhedron's own frame.
    local_aabb: Aabb,
    /// Per face: centre and radius of a sphere holding it.
    face_sphere: Vec<(DVec3, f64)>,
    /// Diagonal of `local_aabb`.
    diameter_bound: f64,
    /// Largest distance of a vertex from the frame's origin.
    radius_about_origin: f64,
    /// The mean of the vertices.
    vertex_centroid: DVec3,
    /// Per face: the pole of its plane about the vertex centroid `c`,
    /// `normal / (offset − normal · c)` (a vertex of the polar polyhedron; see
    /// [`ConvexPolyhedron::face_pole`]).
    face_pole: Vec<DVec3>,
    /// Per edge: the packed data of the closest-feature walk.
    edge_records: Vec<EdgeRecord>,
    /// Per half-edge: the side plane of its face's prism, packed.
    side_planes: Vec<SidePlane>,
    /// The edges leaving each vertex, vertex after vertex (`star_start[v]..star_start[v + 1]`).
    star: Vec<StarEdge>,
    star_start: Vec<u32>,
}

impl ConvexPolyhedron {
    /// Bytes of the polyhedron's arrays: what the narrow phase may read of it.
    #[must_use]
    pub fn data_bytes(&self) -> usize {
        fn bytes<T>(v: &[T]) -> usize {
            std::mem::size_of_val(v)
        }
        bytes(&self.vertices)
            + bytes(&self.half_edges)
            + bytes(&self.faces)
            + bytes(&self.vertex_half_edge)
            + bytes(&self.edges)
            + bytes(&self.edge_half_edge)
            + bytes(&self.half_edge_direction)
            + bytes(&self.half_edge_length)
            + bytes(&self.half_edge_side)
            + bytes(&self.face_sphere)
            + bytes(&self.face_pole)
            + bytes(&self.edge_records)
            + bytes(&self.side_planes)
            + bytes(&self.star)
            + bytes(&self.star_start)
            + std::mem::size_of::<Self>()
    }

    /// Builds the half-edge structure from outward counter-clockwise face loops over
    /// indices into `points`. Only points used by some loop become vertices, in the order of
    /// their index in `points`.
    pub(crate) fn from_face_loops(points: &[DVec3], loops: &[Vec<u32>]) -> Result<Self, GeomError> {
        let internal = |m: String| GeomError::HullConstruction(m);

        let mut vertex_of_point: HashMap<u32, u32> = HashMap::new();
        let mut used: Vec<u32> = loops.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        for (v, &p) in used.iter().enumerate() {
            vertex_of_point.insert(p, v as u32);
        }
        let vertices: Vec<DVec3> = used.iter().map(|&p| points[p as usize]).collect();

        let mut half_edges = Vec::with_capacity(loops.iter().map(Vec::len).sum());
        let mut faces = Vec::with_capacity(loops.len());
        let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
        for (f, face_loop) in loops.iter().enumerate() {
            if face_loop.len() < 3 {
                return Err(internal(format!(
                    "face {f} has {} vertices",
                    face_loop.len()
                )));
            }
            let first = half_edges.len() as u32;
            let count = face_loop.len() as u32;
            for (k, p) in face_loop.iter().enumerate() {
                let origin = vertex_of_point[p];
                let dest = vertex_of_point[&face_loop[(k + 1) % face_loop.len()]];
                let h = first + k as u32;
                if directed.insert((origin, dest), h).is_some() {
                    return Err(internal(format!("edge ({origin}, {dest}) appears twice")));
                }
                half_edges.push(HalfEdge {
                    origin,
                    twin: u32::MAX,
                    next: first + (k as u32 + 1) % count,
                    prev: first + (k as u32 + count - 1) % count,
                    face: f as u32,
                    edge: u32::MAX,
                });
            }
            let loop_points: Vec<DVec3> = face_loop.iter().map(|&p| points[p as usize]).collect();
            let normal = polygon_area_vector(&loop_points)
                .try_normalize()
                .ok_or_else(|| internal(format!("face {f} has no area")))?;
            let centre = loop_points.iter().sum::<DVec3>() / loop_points.len() as f64;
            faces.push(Face {
                normal,
                offset: normal.dot(centre),
                first_half_edge: first,
                vertex_count: count,
            });
        }

        let mut edges = Vec::new();
        let mut edge_half_edge = Vec::new();
        for h in 0..half_edges.len() {
            let origin = half_edges[h].origin;
            let dest = half_edges[half_edges[h].next as usize].origin;
            let twin = *directed
                .get(&(dest, origin))
                .ok_or_else(|| internal(format!("edge ({origin}, {dest}) has no twin")))?;
            half_edges[h].twin = twin;
            if (h as u32) < twin {
                half_edges[h].edge = edges.len() as u32;
                half_edges[twin as usize].edge = edges.len() as u32;
                edges.push([origin, dest]);
                edge_half_edge.push(h as u32);
            }
        }

        let mut vertex_half_edge = vec![u32::MAX; vertices.len()];
        for (h, he) in half_edges.iter().enumerate() {
            let slot = &mut vertex_half_edge[he.origin as usize];
            if *slot == u32::MAX {
                *slot = h as u32;
            }
        }

        let mut half_edge_direction = Vec::with_capacity(half_edges.len());
        let mut half_edge_length = Vec::with_capacity(half_edges.len());
        let mut half_edge_side = Vec::with_capacity(half_edges.len());
        for he in &half_edges {
            let from = vertices[he.origin as usize];
            let to = vertices[half_edges[he.next as usize].origin as usize];
            let length = from.distance(to);
            let direction = (to - from) / length;
            let face_normal = faces[he.face as usize].normal;
            // Normalised again: the face plane is a best fit, the edge only nearly in it.
            let side = direction.cross(face_normal).normalize();
            half_edge_direction.push(direction);
            half_edge_length.push(length);
            half_edge_side.push(side);
        }
        if half_edge_length.iter().any(|l| l.is_nan() || *l <= 0.0)
            || !half_edge_side.iter().all(|s| s.is_finite())
        {
            return Err(internal("an edge has no length".into()));
        }

        let face_sphere = loops
            .iter()
            .map(|l| {
                let centre = l.iter().map(|&p| points[p as usize]).sum::<DVec3>() / l.len() as f64;
                let radius = l
                    .iter()
                    .map(|&p| points[p as usize].distance(centre))
                    .fold(0.0, f64::max);
                (centre, radius)
            })
            .collect();
        let local_aabb = Aabb::from_points(vertices.iter().copied())
            .ok_or_else(|| internal("no vertices".into()))?;

        let edge_records = edges
            .iter()
            .zip(&edge_half_edge)
            .map(|(&[t, hd], &h)| {
                let he = half_edges[h as usize];
                let twin = he.twin as usize;
                EdgeRecord {
                    tail: vertices[t as usize],
                    head: vertices[hd as usize],
                    direction: half_edge_direction[h as usize],
                    left_side: -half_edge_side[h as usize],
                    right_side: -half_edge_side[twin],
                    tail_id: t,
                    head_id: hd,
                    left_face: he.face,
                    right_face: half_edges[twin].face,
                }
            })
            .collect();
        let side_planes = half_edges
            .iter()
            .zip(&half_edge_side)
            .map(|(he, &normal)| SidePlane {
                normal,
                point: vertices[he.origin as usize],
                edge: he.edge,
            })
            .collect();
        let mut star = Vec::with_capacity(half_edges.len());
        let mut star_start = Vec::with_capacity(vertices.len() + 1);
        for &first in &vertex_half_edge {
            star_start.push(star.len() as u32);
            let mut h = first;
            loop {
                let he = half_edges[h as usize];
                star.push(StarEdge {
                    direction: half_edge_direction[h as usize],
                    end: vertices[half_edges[he.next as usize].origin as usize],
                    edge: he.edge,
                    end_vertex: half_edges[he.next as usize].origin,
                    face: he.face,
                });
                h = half_edges[he.prev as usize].twin;
                if h == first {
                    break;
                }
            }
        }
        star_start.push(star.len() as u32);

        let radius_about_origin = vertices.iter().map(|v| v.length()).fold(0.0, f64::max);
        let poly = ConvexPolyhedron {
            vertices,
            half_edges,
            faces,
            vertex_half_edge,
            edges,
            edge_half_edge,
            half_edge_direction,
            half_edge_length,
            half_edge_side,
            diameter_bound: local_aabb.extents().length(),
            radius_about_origin,
            vertex_centroid: DVec3::ZERO,
            face_pole: Vec::new(),
            local_aabb,
            face_sphere,
            edge_records,
            side_planes,
            star,
            star_start,
        };
        let euler = poly.vertices.len() as i64 - poly.edges.len() as i64 + poly.faces.len() as i64;
        if euler != 2 {
            return Err(internal(format!(
                "Euler characteristic {euler}, expected 2"
            )));
        }
        let vertex_centroid = poly.vertices.iter().sum::<DVec3>() / poly.vertices.len() as f64;
        let face_pole = poly
            .faces
            .iter()
            .map(|face| face.normal / (face.offset - face.normal.dot(vertex_centroid)))
            .collect();
        Ok(ConvexPolyhedron {
            vertex_centroid,
            face_pole,
            ..poly
        })
    }

    /// The same polyhedron moved rigidly: every vertex `v` becomes `rotation · v +
    /// translation`; the topology (vertex, edge and face numbering) is kept.
    ///
    /// # Errors
    /// [`GeomError::InvalidParameter`] if `rotation` is not a unit quaternion or
    /// `translation` is not finite.
    pub fn transformed(
        &self,
        rotation: glam::DQuat,
        translation: DVec3,
    ) -> Result<Self, GeomError> {
        if !(rotation.is_finite()
            && (rotation.length() - 1.0).abs() < 1e-9
            && translation.is_finite())
        {
            return Err(GeomError::InvalidParameter {
                name: "rigid transform",
                value: format!("rotation {rotation:?}, translation {translation:?}"),
                allowed: "a unit quaternion and a finite translation",
            });
        }
        let moved: Vec<DVec3> = self
            .vertices
            .iter()
            .map(|&v| rotation * v + translation)
            .collect();
        let loops: Vec<Vec<u32>> = (0..self.faces.len())
            .map(|f| self.face_vertices(f).collect())
            .collect();
        ConvexPolyhedron::from_face_loops(&moved, &loops)
    }

    /// The vertices, in the coordinates they were given.
    #[must_use]
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// The faces.
    #[must_use]
    pub fn faces(&self) -> &[Face] {
        &self.faces
    }

    /// All half-edges; those of face `f` are `half_edges()[faces()[f].half_edges()]`.
    #[must_use]
    pub fn half_edges(&self) -> &[HalfEdge] {
        &self.half_edges
    }

    /// The undirected edges as pairs of vertex indices.
    #[must_use]
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// One of the two half-edges of edge `e` (the one running from `edges()[e][0]`).
    #[must_use]
    pub fn edge_half_edge(&self, e: usize) -> u32 {
        self.edge_half_edge[e]
    }

    /// The two faces that meet at edge `e`.
    #[must_use]
    pub fn edge_faces(&self, e: usize) -> [u32; 2] {
        let h = self.half_edges[self.edge_half_edge[e] as usize];
        [h.face, self.half_edges[h.twin as usize].face]
    }

    /// Bounding box of the polyhedron in its own frame.
    #[must_use]
    pub fn local_aabb(&self) -> Aabb {
        self.local_aabb
    }

    /// Centre and radius of a sphere holding face `f`.
    #[must_use]
    pub fn face_sphere(&self, f: usize) -> (DVec3, f64) {
        self.face_sphere[f]
    }

    /// An upper bound of the diameter in O(1): the diagonal of the own-frame bounding box.
    #[must_use]
    pub fn diameter_bound(&self) -> f64 {
        self.diameter_bound
    }

    /// The largest distance of a vertex from the origin of the polyhedron's frame: no point
    /// of it lies farther from that origin (for a grain's body, its centre of mass).
    #[must_use]
    pub fn radius_about_origin(&self) -> f64 {
        self.radius_about_origin
    }

    /// Unit direction of half-edge `h`, from its origin to its end.
    #[must_use]
    pub fn half_edge_direction(&self, h: usize) -> DVec3 {
        self.half_edge_direction[h]
    }

    /// Length of half-edge `h`.
    #[must_use]
    pub fn half_edge_length(&self, h: usize) -> f64 {
        self.half_edge_length[h]
    }

    /// Outward unit normal of the side plane through half-edge `h` of its face's Voronoi
    /// prism (`direction × face normal`): a point `x` is beside the face, beyond this edge,
    /// when `side · (x − origin) > 0`.
    #[must_use]
    pub fn half_edge_side(&self, h: usize) -> DVec3 {
        self.half_edge_side[h]
    }

    /// The packed walk data of edge `e`.
    #[inline]
    pub(crate) fn edge_record(&self, e: usize) -> &EdgeRecord {
        &self.edge_records[e]
    }

    /// The side planes of face `f`'s prism, one per half-edge in the order of its loop.
    #[inline]
    pub(crate) fn face_side_planes(&self, f: usize) -> &[SidePlane] {
        &self.side_planes[self.faces[f].half_edges()]
    }

    /// The edges leaving vertex `v`, in the order of [`ConvexPolyhedron::vertex_half_edges`].
    #[inline]
    pub(crate) fn vertex_star(&self, v: usize) -> &[StarEdge] {
        &self.star[self.star_start[v] as usize..self.star_start[v + 1] as usize]
    }

    /// The pole of face `f`'s plane `n · x = d` about the vertex centroid `c`:
    /// `n / (d − n · c)`. A point `x` lies beyond that plane exactly when
    /// `pole · (x − c) > 1`, and the poles of adjacent faces are joined by edges of the
    /// polar polyhedron, so the face a point lies farthest beyond (in this measure) is found
    /// by climbing the face graph.
    #[inline]
    pub(crate) fn face_pole(&self, f: usize) -> DVec3 {
        self.face_pole[f]
    }

    /// The vertex at which half-edge `h` ends.
    #[must_use]
    pub fn half_edge_end(&self, h: usize) -> u32 {
        self.half_edges[self.half_edges[h].next as usize].origin
    }

    /// One outgoing half-edge of vertex `v`.
    #[must_use]
    pub fn vertex_half_edge(&self, v: usize) -> u32 {
        self.vertex_half_edge[v]
    }

    /// The vertex indices of face `f`, counter-clockwise seen from outside.
    pub fn face_vertices(&self, f: usize) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.half_edges[self.faces[f].half_edges()]
            .iter()
            .map(|h| h.origin)
    }

    /// The half-edges leaving vertex `v`, in rotational order around it.
    pub fn vertex_half_edges(&self, v: usize) -> VertexHalfEdges<'_> {
        let start = self.vertex_half_edge[v];
        VertexHalfEdges {
            half_edges: &self.half_edges,
            start,
            current: Some(start),
        }
    }

    /// The vertices joined to vertex `v` by an edge.
    pub fn vertex_neighbors(&self, v: usize) -> impl Iterator<Item = u32> + '_ {
        self.vertex_half_edges(v)
            .map(|h| self.half_edges[self.half_edges[h as usize].next as usize].origin)
    }

    /// Number of vertices, edges and faces.
    #[must_use]
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.vertices.len(), self.edges.len(), self.faces.len())
    }

    /// Mean of the vertices: a point strictly inside a convex polyhedron.
    #[must_use]
    pub fn vertex_centroid(&self) -> DVec3 {
        self.vertex_centroid
    }

    /// Largest distance between two vertices.
    #[must_use]
    pub fn diameter(&self) -> f64 {
        let mut d2: f64 = 0.0;
        for (i, a) in self.vertices.iter().enumerate() {
            for b in &self.vertices[i + 1..] {
                d2 = d2.max(a.distance_squared(*b));
            }
        }
        d2.sqrt()
    }

    /// Largest signed distance of `point` beyond the face planes: negative inside, zero on
    /// the surface, positive outside (equal to the distance where a face is closest).
    #[must_use]
    pub fn max_face_distance(&self, point: DVec3) -> f64 {
        self.faces
            .iter()
            .map(|f| f.signed_distance(point))
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// Iterator over the outgoing half-edges of a vertex (see
/// [`ConvexPolyhedron::vertex_half_edges`]).
pub struct VertexHalfEdges<'a> {
    half_edges: &'a [HalfEdge],
    start: u32,
    current: Option<u32>,
}

impl Iterator for VertexHalfEdges<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let h = self.current?;
        // prev of h ends at the vertex; its twin leaves the vertex into the next face.
        let next = self.half_edges[self.half_edges[h as usize].prev as usize].twin;
        self.current = (next != self.start).then_some(next);
        Some(h)
    }
}

/// The vector area of a planar polygon and its moment `∫ (x − about) × dS` about `about`
/// (fan triangles from the first corner, each's area vector at its centroid).
#[must_use]
pub fn polygon_area_and_moment(polygon: &[DVec3], about: DVec3) -> (DVec3, DVec3) {
    let origin = polygon[0];
    let (mut sum, mut moment) = (DVec3::ZERO, DVec3::ZERO);
    for k in 1..polygon.len().saturating_sub(1) {
        let (p, q) = (polygon[k] - origin, polygon[k + 1] - origin);
        let twice = p.cross(q);
        sum += twice;
        moment += ((origin - about) + (p + q) / 3.0).cross(0.5 * twice);
    }
    // The area as [`polygon_area_vector`] sums it, to the last bit.
    (0.5 * sum, moment)
}

/// Vector area of a polygon (half the sum of the cross products of a fan): its direction is
/// the normal by the right-hand rule, its length the area.
#[must_use]
pub fn polygon_area_vector(polygon: &[DVec3]) -> DVec3 {
    let origin = polygon[0];
    let mut sum = DVec3::ZERO;
    for k in 1..polygon.len().saturating_sub(1) {
        sum += (polygon[k] - origin).cross(polygon[k + 1] - origin);
    }
    0.5 * sum
}
