//! The volume a triangle mesh encloses, by the divergence theorem, when it is closed.

use std::collections::HashMap;

use talus_geom::glam::DVec3;

/// The volume enclosed by `triangles` (indices into `points`): the sum of the signed
/// volumes of the tetrahedra from the origin to each triangle (divergence theorem), or
/// `None` when the mesh does not enclose a volume — an open surface, an edge shared by
/// more than two triangles, or triangles oriented inconsistently.
///
/// Vertices at the same coordinates count as one (STL and many exports repeat them), and
/// triangles with two equal corners are skipped. An inward-oriented mesh gives the same
/// (positive) volume as an outward one.
#[must_use]
pub fn closed_mesh_volume(points: &[DVec3], triangles: &[[u32; 3]]) -> Option<f64> {
    let mut welded: HashMap<[u64; 3], u32> = HashMap::new();
    let canonical: Vec<u32> = points
        .iter()
        .map(|p| {
            let key = [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()];
            let next = welded.len() as u32;
            *welded.entry(key).or_insert(next)
        })
        .collect();
    // A closed, consistently oriented surface uses each directed edge exactly once, and its
    // reverse exactly once.
    let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
    let mut volume = 0.0;
    let mut faces = 0;
    for t in triangles {
        let idx = t.map(|i| canonical.get(i as usize).copied());
        let [Some(a), Some(b), Some(c)] = idx else {
            return None;
        };
        if a == b || b == c || c == a {
            continue;
        }
        faces += 1;
        for edge in [(a, b), (b, c), (c, a)] {
            *directed.entry(edge).or_insert(0) += 1;
        }
        let (pa, pb, pc) = (
            points[t[0] as usize],
            points[t[1] as usize],
            points[t[2] as usize],
        );
        volume += pa.dot(pb.cross(pc)) / 6.0;
    }
    let closed = faces >= 4
        && directed
            .iter()
            .all(|(&(a, b), &n)| n == 1 && directed.get(&(b, a)) == Some(&1));
    (closed && volume != 0.0).then_some(volume.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube() -> (Vec<DVec3>, Vec<[u32; 3]>) {
        let points = (0..8)
            .map(|i| DVec3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64))
            .collect();
        // Outward faces as quads split in two.
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        let triangles = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        (points, triangles)
    }

    #[test]
    fn a_unit_cube_encloses_one() {
        let (p, t) = cube();
        assert!((closed_mesh_volume(&p, &t).unwrap() - 1.0).abs() < 1e-15);
        let flipped: Vec<[u32; 3]> = t.iter().map(|t| [t[0], t[2], t[1]]).collect();
        assert!((closed_mesh_volume(&p, &flipped).unwrap() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn an_open_or_inconsistent_mesh_has_no_volume() {
        let (p, mut t) = cube();
        let last = t.pop().unwrap();
        assert_eq!(closed_mesh_volume(&p, &t), None);
        t.push([last[0], last[2], last[1]]);
        assert_eq!(closed_mesh_volume(&p, &t), None);
        t.push([9, 0, 1]);
        assert_eq!(closed_mesh_volume(&p, &t), None);
    }
}
