//! Merging coplanar triangles of a hull into planar polygonal faces.
//!
//! Hull construction yields triangles; a cube comes out as twelve of them. Adjacent
//! triangles whose four points lie in one plane up to a tight tolerance are merged, so that
//! a face of the polyhedron is a planar convex polygon (thesis §3.1: a face may consist of
//! several parallel triangles). A group that would not come out as one planar polygon with a
//! single boundary loop stays split into its triangles: merging is an economy, never a
//! change of shape.

use std::collections::HashMap;

use glam::DVec3;

use crate::polyhedron::polygon_area_vector;

/// Outward, counter-clockwise vertex loops of the merged faces.
pub(crate) fn merge_coplanar(
    points: &[DVec3],
    triangles: &[[u32; 3]],
    tolerance: f64,
) -> Vec<Vec<u32>> {
    let edge_owner: HashMap<(u32, u32), usize> = triangles
        .iter()
        .enumerate()
        .flat_map(|(t, tri)| (0..3).map(move |k| ((tri[k], tri[(k + 1) % 3]), t)))
        .collect();
    let planes: Vec<Option<(DVec3, DVec3)>> = triangles.iter().map(|&t| plane(points, t)).collect();

    let mut groups = UnionFind::new(triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let Some(&u) = edge_owner.get(&(b, a)) else {
                continue;
            };
            if u <= t {
                continue;
            }
            let c = tri[(k + 2) % 3];
            let d = opposite(triangles[u], a, b);
            if coplanar(points, planes[t], planes[u], c, d, tolerance) {
                groups.union(t, u);
            }
        }
    }

    let mut members: Vec<Vec<usize>> = vec![Vec::new(); triangles.len()];
    for t in 0..triangles.len() {
        members[groups.find(t)].push(t);
    }
    let group_of: Vec<usize> = (0..triangles.len()).map(|t| groups.find(t)).collect();

    let mut loops = Vec::new();
    for (root, group) in members.iter().enumerate() {
        if group.is_empty() || group_of[root] != root {
            continue;
        }
        if group.len() == 1 {
            loops.push(triangles[group[0]].to_vec());
            continue;
        }
        match boundary_loop(triangles, group, &edge_owner, &group_of, root)
            .filter(|l| is_planar(points, l, group, triangles, tolerance))
        {
            Some(l) => loops.push(l),
            None => loops.extend(group.iter().map(|&t| triangles[t].to_vec())),
        }
    }
    loops
}

/// The vertex of `tri` that is neither `a` nor `b`.
fn opposite(tri: [u32; 3], a: u32, b: u32) -> u32 {
    tri.into_iter()
        .find(|&v| v != a && v != b)
        .unwrap_or(tri[0])
}

/// Unit normal and a point of a triangle's plane, if the triangle has a usable normal.
fn plane(points: &[DVec3], t: [u32; 3]) -> Option<(DVec3, DVec3)> {
    let [a, b, c] = t.map(|i| points[i as usize]);
    (b - a).cross(c - a).try_normalize().map(|n| (n, a))
}

/// Whether two adjacent triangles lie in one plane: the far vertex of each is within
/// `tolerance` of the other's plane. A triangle without a normal has no plane of its own and
/// lies in its neighbour's as soon as its far vertex does.
fn coplanar(
    points: &[DVec3],
    plane_t: Option<(DVec3, DVec3)>,
    plane_u: Option<(DVec3, DVec3)>,
    far_t: u32,
    far_u: u32,
    tolerance: f64,
) -> bool {
    let within = |plane: Option<(DVec3, DVec3)>, p: u32| {
        plane.is_none_or(|(n, o)| n.dot(points[p as usize] - o).abs() <= tolerance)
    };
    within(plane_t, far_u) && within(plane_u, far_t)
}

/// The single boundary loop of a group of triangles, or `None` if its boundary is not one
/// simple loop.
fn boundary_loop(
    triangles: &[[u32; 3]],
    group: &[usize],
    edge_owner: &HashMap<(u32, u32), usize>,
    group_of: &[usize],
    root: usize,
) -> Option<Vec<u32>> {
    let mut next: HashMap<u32, u32> = HashMap::new();
    let mut start = None;
    for &t in group {
        let tri = triangles[t];
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let inside = edge_owner
                .get(&(b, a))
                .is_some_and(|&u| group_of[u] == root);
            if !inside {
                if next.insert(a, b).is_some() {
                    return None;
                }
                start.get_or_insert(a);
            }
        }
    }
    let start = start?;
    let mut out = vec![start];
    let mut v = *next.get(&start)?;
    while v != start {
        if out.len() > next.len() {
            return None;
        }
        out.push(v);
        v = *next.get(&v)?;
    }
    (out.len() == next.len() && out.len() >= 3).then_some(out)
}

/// Whether every vertex of a group lies within `tolerance` of the plane of its boundary loop.
fn is_planar(
    points: &[DVec3],
    boundary: &[u32],
    group: &[usize],
    triangles: &[[u32; 3]],
    tolerance: f64,
) -> bool {
    let polygon: Vec<DVec3> = boundary.iter().map(|&v| points[v as usize]).collect();
    let Some(normal) = polygon_area_vector(&polygon).try_normalize() else {
        return false;
    };
    let origin = points[boundary[0] as usize];
    group
        .iter()
        .flat_map(|&t| triangles[t])
        .all(|v| normal.dot(points[v as usize] - origin).abs() <= tolerance)
}

/// Disjoint sets with path halving; the smaller index becomes the root, so that groups are
/// numbered deterministically.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[hi] = lo;
    }
}
