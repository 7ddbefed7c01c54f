//! Recursive coordinate bisection: the scene cut into one region per process, each holding
//! about the same work. The points (grain centres) are split across the longest side of
//! their box at the weighted quantile that gives each half its share of the processes, and
//! each half again, down to one process per region. Computed from the same points, in the
//! same order, it is the same on every process.

use talus_geom::glam::DVec3;

/// A region tree: leaves are processes, inner nodes cut a region in two along an axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Bisection {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// The region of one process.
    Leaf(u32),
    /// Points below `at` on `axis` go to the node `low`, the others to `high`.
    Cut {
        axis: u8,
        at: f64,
        low: u32,
        high: u32,
    },
}

/// A point to place, with its weight (the work it brings) and a tie-breaking key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightedPoint {
    /// Where it is.
    pub position: DVec3,
    /// Its share of the work (positive).
    pub weight: f64,
    /// Distinct per point: orders points of equal coordinate.
    pub key: u32,
}

impl Bisection {
    /// One region holding everything.
    #[must_use]
    pub fn whole() -> Bisection {
        Bisection {
            nodes: vec![Node::Leaf(0)],
        }
    }

    /// Regions for `ranks` processes over `points` (reordered in place). With no points,
    /// or fewer points than processes, some regions are empty.
    #[must_use]
    pub fn balance(points: &mut [WeightedPoint], ranks: usize) -> Bisection {
        let mut nodes = Vec::with_capacity(2 * ranks.max(1));
        split(points, 0, ranks.max(1) as u32, &mut nodes);
        Bisection { nodes }
    }

    /// The process whose region holds `x`.
    #[must_use]
    pub fn owner(&self, x: DVec3) -> u32 {
        let mut node = 0usize;
        loop {
            match self.nodes[node] {
                Node::Leaf(rank) => return rank,
                Node::Cut {
                    axis,
                    at,
                    low,
                    high,
                } => {
                    // A NaN coordinate goes high: some region has to take it.
                    node = if x[axis as usize] < at { low } else { high } as usize;
                }
            }
        }
    }

    /// Number of regions.
    #[must_use]
    pub fn regions(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf(_)))
            .count()
    }
}

/// Builds the subtree of processes `first..first + count` over `points`; returns its index.
fn split(points: &mut [WeightedPoint], first: u32, count: u32, nodes: &mut Vec<Node>) -> u32 {
    let index = nodes.len() as u32;
    if count == 1 {
        nodes.push(Node::Leaf(first));
        return index;
    }
    let (lo, hi) = points
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.position), hi.max(p.position))
        });
    let extent = hi - lo;
    // No points: an empty box, cut anywhere (along x).
    let axis = if points.is_empty() || (extent.x >= extent.y && extent.x >= extent.z) {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    points.sort_unstable_by(|p, q| {
        p.position[axis]
            .total_cmp(&q.position[axis])
            .then(p.key.cmp(&q.key))
    });
    let low_count = count / 2;
    let total: f64 = points.iter().map(|p| p.weight).sum();
    let target = total * f64::from(low_count) / f64::from(count);
    // The first point past the low half's share of the work.
    let mut sum = 0.0;
    let mut cut = points.len();
    for (i, p) in points.iter().enumerate() {
        if sum >= target {
            cut = i;
            break;
        }
        sum += p.weight;
    }
    let at = match (cut.checked_sub(1).map(|i| points[i]), points.get(cut)) {
        (Some(below), Some(above)) => 0.5 * (below.position[axis] + above.position[axis]),
        (None, Some(above)) => above.position[axis],
        (Some(below), None) => next_up(below.position[axis]),
        (None, None) => 0.0,
    };
    // Points of the cut's coordinate on both sides go high, as `owner` sends them.
    let cut = points.partition_point(|p| p.position[axis] < at);
    nodes.push(Node::Leaf(u32::MAX));
    let (low_points, high_points) = points.split_at_mut(cut);
    let low = split(low_points, first, low_count, nodes);
    let high = split(high_points, first + low_count, count - low_count, nodes);
    nodes[index as usize] = Node::Cut {
        axis: axis as u8,
        at,
        low,
        high,
    };
    index
}

/// The smallest double above `x` (finite `x`), so that a cut there leaves `x` below it.
fn next_up(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(n: usize) -> Vec<WeightedPoint> {
        // A slab longer in y than in x and z, points spread by a fixed recurrence.
        (0..n)
            .map(|i| {
                let f = |k: usize| ((i * k + 7) % 101) as f64 / 101.0;
                WeightedPoint {
                    position: DVec3::new(f(37), 4.0 * f(53), 0.5 * f(71)),
                    weight: 1.0,
                    key: i as u32,
                }
            })
            .collect()
    }

    #[test]
    fn each_process_gets_its_share_of_the_points() {
        for ranks in 1..=7 {
            let mut p = points(1000);
            let b = Bisection::balance(&mut p, ranks);
            assert_eq!(b.regions(), ranks);
            let mut counts = vec![0usize; ranks];
            for q in points(1000) {
                counts[b.owner(q.position) as usize] += 1;
            }
            let ideal = 1000.0 / ranks as f64;
            for c in counts {
                // Points of equal coordinate cannot be separated; the recurrence gives few.
                assert!(
                    (c as f64 - ideal).abs() <= 0.05 * ideal + 12.0,
                    "{ranks}: {c}"
                );
            }
        }
    }

    #[test]
    fn the_first_cut_is_across_the_longest_side_and_weights_count() {
        let mut p = points(400);
        let heavy_low: Vec<WeightedPoint> = p
            .iter()
            .map(|q| WeightedPoint {
                weight: if q.position.y < 2.0 { 3.0 } else { 1.0 },
                ..*q
            })
            .collect();
        let b = Bisection::balance(&mut p, 2);
        let Node::Cut { axis, at, .. } = b.nodes[0] else {
            panic!("two regions need a cut")
        };
        assert_eq!(axis, 1);
        assert!((at - 2.0).abs() < 0.2, "{at}");
        let mut heavy = heavy_low;
        let b = Bisection::balance(&mut heavy, 2);
        let Node::Cut { at, .. } = b.nodes[0] else {
            panic!("two regions need a cut")
        };
        // Three times the work below y = 2: the cut moves down to where half of it is.
        assert!(at < 1.5, "{at}");
    }

    #[test]
    fn no_points_and_fewer_points_than_processes_leave_regions_empty() {
        let b = Bisection::balance(&mut [], 3);
        assert_eq!(b.regions(), 3);
        let mut two = points(2);
        let b = Bisection::balance(&mut two, 5);
        assert_eq!(b.regions(), 5);
        let owners: Vec<u32> = points(2).iter().map(|p| b.owner(p.position)).collect();
        assert_ne!(owners[0], owners[1]);
    }
}
