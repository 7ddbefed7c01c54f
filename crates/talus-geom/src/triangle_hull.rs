//! Incremental convex hull of triangles in f64 (beneath–beyond).
//!
//! quickhull works in f32, so its triangulation is only a topology that is right up to f32
//! round-off. This module takes such a triangulation (or a starting tetrahedron) and, in f64,
//! inserts every input point that still lies outside one of its triangles by more than a
//! tolerance: the visible triangles around the point are removed and the hole is closed by a
//! fan from the point to the horizon. The result is a closed triangle mesh, outward oriented,
//! that contains every input point up to the tolerance.

use std::collections::HashMap;

use glam::DVec3;

/// A closed, outward-oriented triangle mesh over indices into a point slice.
pub(crate) struct TriangleHull<'a> {
    points: &'a [DVec3],
    triangles: Vec<[u32; 3]>,
    alive: Vec<bool>,
    /// Unit outward normal and offset (`n · x = offset`) per triangle; `None` when the
    /// triangle has no area to speak of and therefore no plane.
    planes: Vec<Option<(DVec3, f64)>>,
    /// Directed edge `(from, to)` → triangle that has it.
    edge_owner: HashMap<(u32, u32), u32>,
    tolerance: f64,
}

impl<'a> TriangleHull<'a> {
    /// Starts from triangles that must form a closed oriented mesh over `points`.
    ///
    /// `tolerance` is the distance beyond a triangle's plane from which a point counts as
    /// outside.
    pub(crate) fn new(
        points: &'a [DVec3],
        triangles: &[[u32; 3]],
        tolerance: f64,
    ) -> Result<Self, String> {
        let mut hull = TriangleHull {
            points,
            triangles: Vec::with_capacity(triangles.len()),
            alive: Vec::with_capacity(triangles.len()),
            planes: Vec::with_capacity(triangles.len()),
            edge_owner: HashMap::with_capacity(triangles.len() * 3),
            tolerance,
        };
        for &t in triangles {
            hull.push_triangle(t)?;
        }
        hull.check_closed()?;
        Ok(hull)
    }

    /// Inserts every point that lies outside the current hull by more than the tolerance.
    pub(crate) fn insert_outside_points(
        &mut self,
        order: impl Iterator<Item = u32>,
    ) -> Result<(), String> {
        for p in order {
            if let Some(seed) = self.most_visible_triangle(p) {
                self.insert(p, seed)?;
            }
        }
        self.check_closed()
    }

    /// The live triangles.
    pub(crate) fn into_triangles(self) -> Vec<[u32; 3]> {
        self.triangles
            .into_iter()
            .zip(self.alive)
            .filter_map(|(t, alive)| alive.then_some(t))
            .collect()
    }

    fn push_triangle(&mut self, t: [u32; 3]) -> Result<u32, String> {
        let id = self.triangles.len() as u32;
        for k in 0..3 {
            let edge = (t[k], t[(k + 1) % 3]);
            if self.edge_owner.insert(edge, id).is_some() {
                return Err(format!("directed edge {edge:?} used by two triangles"));
            }
        }
        self.planes.push(self.plane_of(t));
        self.triangles.push(t);
        self.alive.push(true);
        Ok(id)
    }

    fn remove_triangle(&mut self, id: u32) {
        let t = self.triangles[id as usize];
        for k in 0..3 {
            self.edge_owner.remove(&(t[k], t[(k + 1) % 3]));
        }
        self.alive[id as usize] = false;
    }

    fn plane_of(&self, t: [u32; 3]) -> Option<(DVec3, f64)> {
        let [a, b, c] = t.map(|i| self.points[i as usize]);
        let n = (b - a).cross(c - a);
        let len = n.length();
        // A triangle whose doubled area is below tolerance × its longest edge has a normal
        // that round-off dominates: it gets no plane and is never taken as visible.
        let longest = (b - a).length().max((c - b).length()).max((a - c).length());
        if len <= self.tolerance * longest || len == 0.0 {
            return None;
        }
        let n = n / len;
        Some((n, n.dot((a + b + c) / 3.0)))
    }

    fn distance(&self, tri: u32, p: u32) -> Option<f64> {
        self.planes[tri as usize].map(|(n, d)| n.dot(self.points[p as usize]) - d)
    }

    fn most_visible_triangle(&self, p: u32) -> Option<u32> {
        let mut best: Option<(u32, f64)> = None;
        for id in 0..self.triangles.len() as u32 {
            if !self.alive[id as usize] || self.triangles[id as usize].contains(&p) {
                continue;
            }
            if let Some(d) = self.distance(id, p)
                && d > self.tolerance
                && best.is_none_or(|(_, bd)| d > bd)
            {
                best = Some((id, d));
            }
        }
        best.map(|(id, _)| id)
    }

    fn neighbour(&self, tri: u32, k: usize) -> Option<u32> {
        let t = self.triangles[tri as usize];
        self.edge_owner.get(&(t[(k + 1) % 3], t[k])).copied()
    }

    fn insert(&mut self, p: u32, seed: u32) -> Result<(), String> {
        // Grow the visible region from the most visible triangle across edges to triangles
        // that also see p: a connected region, whose boundary is the horizon.
        let mut visible = vec![seed];
        let mut in_region: HashMap<u32, ()> = HashMap::from([(seed, ())]);
        let mut cursor = 0;
        while cursor < visible.len() {
            let tri = visible[cursor];
            cursor += 1;
            for k in 0..3 {
                let Some(nb) = self.neighbour(tri, k) else {
                    return Err(format!("triangle {tri} has an open edge"));
                };
                if in_region.contains_key(&nb) {
                    continue;
                }
                let sees = match self.distance(nb, p) {
                    Some(d) => d > 0.0,
                    // A triangle without a plane is degenerate: it is replaced whenever a
                    // neighbour is, so that it cannot survive as a sliver in the new fan.
                    None => true,
                };
                if sees {
                    in_region.insert(nb, ());
                    visible.push(nb);
                }
            }
        }
        let mut horizon = Vec::new();
        for &tri in &visible {
            let t = self.triangles[tri as usize];
            for k in 0..3 {
                let nb = self.neighbour(tri, k).ok_or("open edge")?;
                if !in_region.contains_key(&nb) {
                    horizon.push((t[k], t[(k + 1) % 3]));
                }
            }
        }
        if horizon.len() < 3 {
            return Err(format!("point {p} sees the whole hull"));
        }
        for &tri in &visible {
            self.remove_triangle(tri);
        }
        for (a, b) in horizon {
            self.push_triangle([a, b, p])?;
        }
        Ok(())
    }

    fn check_closed(&self) -> Result<(), String> {
        for (&(a, b), _) in self.edge_owner.iter() {
            if !self.edge_owner.contains_key(&(b, a)) {
                return Err(format!(
                    "edge ({a}, {b}) has no opposite: the mesh is not closed"
                ));
            }
        }
        if self.edge_owner.len() < 12 {
            return Err("fewer than 4 triangles".into());
        }
        Ok(())
    }
}

/// An outward-oriented tetrahedron on four points that span a volume.
pub(crate) fn tetrahedron(points: &[DVec3], [a, b, c, d]: [u32; 4]) -> Vec<[u32; 3]> {
    let p = |i: u32| points[i as usize];
    // With (a, b, c) counter-clockwise seen from outside, d must lie below the plane.
    let below = (p(b) - p(a)).cross(p(c) - p(a)).dot(p(d) - p(a)) < 0.0;
    let (b, c) = if below { (b, c) } else { (c, b) };
    vec![[a, b, c], [a, d, b], [b, d, c], [c, d, a]]
}
