//! A bounding-box tree over the faces of a polyhedron, in its body frame: finds the faces
//! near a region in O(log F + answer), so that the overlap computation does work in
//! proportion to the overlap, not to the number of faces.

use glam::DVec3;

use crate::bounds::Aabb;

/// Faces per leaf.
const LEAF_SIZE: usize = 4;

#[derive(Debug, Clone, PartialEq)]
struct Node {
    bounds: Aabb,
    /// Leaf: range into `faces`; inner node: children at `first` and `first + 1`.
    first: u32,
    count: u32,
}

/// Static tree of face bounding boxes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FaceTree {
    nodes: Vec<Node>,
    faces: Vec<u32>,
}

impl FaceTree {
    /// Builds the tree from one box per face (median splits along the widest axis).
    pub fn new(face_bounds: &[Aabb]) -> FaceTree {
        let mut tree = FaceTree {
            nodes: Vec::with_capacity(2 * face_bounds.len() / LEAF_SIZE + 2),
            faces: (0..face_bounds.len() as u32).collect(),
        };
        tree.nodes.push(Node {
            bounds: face_bounds[0],
            first: 0,
            count: 0,
        });
        tree.build(0, 0, face_bounds.len(), face_bounds);
        tree
    }

    fn build(&mut self, node: usize, start: usize, end: usize, face_bounds: &[Aabb]) {
        let slice = &mut self.faces[start..end];
        let bounds = slice
            .iter()
            .skip(1)
            .fold(face_bounds[slice[0] as usize], |b, &f| {
                let c = face_bounds[f as usize];
                Aabb {
                    min: b.min.min(c.min),
                    max: b.max.max(c.max),
                }
            });
        self.nodes[node].bounds = bounds;
        if end - start <= LEAF_SIZE {
            self.nodes[node].first = start as u32;
            self.nodes[node].count = (end - start) as u32;
            return;
        }
        let axis = bounds.extents().max_position();
        let centre = |f: &u32| {
            let b = face_bounds[*f as usize];
            b.min[axis] + b.max[axis]
        };
        let mid = (end - start) / 2;
        slice.select_nth_unstable_by(mid, |x, y| centre(x).total_cmp(&centre(y)));
        let first = self.nodes.len();
        let placeholder = Node {
            bounds,
            first: 0,
            count: 0,
        };
        self.nodes.push(placeholder.clone());
        self.nodes.push(placeholder);
        self.nodes[node].first = first as u32;
        self.nodes[node].count = 0;
        self.build(first, start, start + mid, face_bounds);
        self.build(first + 1, start + mid, end, face_bounds);
    }

    /// Box around all faces.
    pub fn bounds(&self) -> Aabb {
        self.nodes[0].bounds
    }

    /// Appends to `out` every face whose box intersects `query`.
    pub fn query(&self, query: &Aabb, out: &mut Vec<u32>) {
        let mut stack = [0u32; 64];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = &self.nodes[stack[top] as usize];
            if !node.bounds.intersects(query) {
                continue;
            }
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                out.extend_from_slice(&self.faces[range]);
            } else {
                stack[top] = node.first;
                stack[top + 1] = node.first + 1;
                top += 2;
            }
        }
    }
}

/// The box of a face from its corners.
pub(crate) fn face_box(corners: impl Iterator<Item = DVec3>) -> Aabb {
    let mut min = DVec3::INFINITY;
    let mut max = DVec3::NEG_INFINITY;
    for c in corners {
        min = min.min(c);
        max = max.max(c);
    }
    Aabb { min, max }
}
