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

/// Bins of the weight along a cut's axis per round of [`Bisection::balance_across`].
const BINS: usize = 64;

/// Rounds of [`Bisection::balance_across`]'s search per cut: each narrows the interval
/// holding the cut to one bin of the last, to 64⁻⁴ ≈ 6 · 10⁻⁸ of the region's extent after
/// four (a tenth of a grain's size in a column of 10⁶ grains).
const SEARCH_ROUNDS: usize = 4;

/// A region still to be cut by [`Bisection::balance_across`].
struct Open {
    /// Its node, whose entry is a placeholder until it is cut.
    node: u32,
    /// Its processes, `first..first + count`.
    first: u32,
    count: u32,
    /// This process's points in it.
    points: std::ops::Range<usize>,
}

/// The search for one region's cut: along `axis`, in `[low, high)`, the weight below `low`
/// known (`below`), the weight the low part takes at least (`target`).
#[derive(Clone, Copy)]
struct Search {
    axis: usize,
    low: f64,
    high: f64,
    below: f64,
    target: f64,
    /// No process has a point in the region: nothing to search.
    empty: bool,
}

impl Search {
    /// The bins' edges: `BINS + 1` values from `low` to `high`, never decreasing.
    fn edges(&self) -> [f64; BINS + 1] {
        let mut edges = [self.high; BINS + 1];
        for (i, e) in edges.iter_mut().enumerate().take(BINS) {
            *e = self.low + (self.high - self.low) * (i as f64 / BINS as f64);
        }
        edges
    }
}

impl Bisection {
    /// The regions of [`Bisection::balance`] when the points are spread over the processes
    /// of a group: each process passes its own `points` (reordered in place), and every
    /// process calls this at the same point with the same `ranks`. `gather` sends a list
    /// of numbers to every process of the group and returns every process's list, by rank.
    ///
    /// Nothing of the points themselves is sent. The regions are cut level by level of the
    /// tree, all cuts of a level together: one round gathers each region's box and weight
    /// (per process; summed in rank order, so every process computes the same), and
    /// [`SEARCH_ROUNDS`] more each gather a histogram of the weight along the cut's axis
    /// ([`BINS`] bins) and narrow the interval holding the weighted quantile to one bin.
    /// The cut is then the upper edge of that bin: the low region takes at least its share
    /// of the weight and less than its share and the points of one bin more, as the
    /// single-process cut takes its share and less than one point more. That is
    /// `(1 + SEARCH_ROUNDS) · ⌈log₂ ranks⌉` rounds of at most `BINS` numbers per region,
    /// whatever the number of points; the same regions on every process.
    pub fn balance_across(
        points: &mut [WeightedPoint],
        ranks: usize,
        gather: &mut dyn FnMut(Vec<f64>) -> Vec<Vec<f64>>,
    ) -> Bisection {
        let mut nodes = vec![Node::Leaf(u32::MAX)];
        let mut level = vec![Open {
            node: 0,
            first: 0,
            count: ranks.max(1) as u32,
            points: 0..points.len(),
        }];
        while !level.is_empty() {
            let (leaves, open): (Vec<Open>, Vec<Open>) =
                level.into_iter().partition(|o| o.count == 1);
            for leaf in leaves {
                nodes[leaf.node as usize] = Node::Leaf(leaf.first);
            }
            if open.is_empty() {
                break;
            }
            let mut searches = searches(points, &open, gather);
            for _ in 0..SEARCH_ROUNDS {
                narrow_searches(points, &open, &mut searches, gather);
            }
            level = Vec::with_capacity(2 * open.len());
            for (o, s) in open.iter().zip(&searches) {
                let at = if s.empty { 0.0 } else { s.high };
                let mine = &mut points[o.points.clone()];
                let low_points = partition_below(mine, s.axis, at);
                let split = o.points.start + low_points;
                let (low, high) = (nodes.len() as u32, nodes.len() as u32 + 1);
                nodes.extend([Node::Leaf(u32::MAX), Node::Leaf(u32::MAX)]);
                nodes[o.node as usize] = Node::Cut {
                    axis: s.axis as u8,
                    at,
                    low,
                    high,
                };
                let low_count = o.count / 2;
                level.push(Open {
                    node: low,
                    first: o.first,
                    count: low_count,
                    points: o.points.start..split,
                });
                level.push(Open {
                    node: high,
                    first: o.first + low_count,
                    count: o.count - low_count,
                    points: split..o.points.end,
                });
            }
        }
        Bisection { nodes }
    }
}

/// The search of each open region: its box and weight over all processes (one round),
/// the axis across its longest side (as [`split`] takes it), the whole extent to search.
fn searches(
    points: &[WeightedPoint],
    open: &[Open],
    gather: &mut dyn FnMut(Vec<f64>) -> Vec<Vec<f64>>,
) -> Vec<Search> {
    // Per region: the low corner, the high corner and the weight, 7 numbers.
    let mut mine = Vec::with_capacity(7 * open.len());
    for o in open {
        let (lo, hi, weight) = points[o.points.clone()].iter().fold(
            (DVec3::INFINITY, DVec3::NEG_INFINITY, 0.0),
            |(lo, hi, w), p| (lo.min(p.position), hi.max(p.position), w + p.weight),
        );
        mine.extend(lo.to_array());
        mine.extend(hi.to_array());
        mine.push(weight);
    }
    let all = gather(mine);
    open.iter()
        .enumerate()
        .map(|(i, o)| {
            let at = |list: &Vec<f64>, k: usize| list.get(7 * i + k).copied().unwrap_or(f64::NAN);
            let (mut lo, mut hi, mut total) = (DVec3::INFINITY, DVec3::NEG_INFINITY, 0.0);
            for list in &all {
                lo = lo.min(DVec3::new(at(list, 0), at(list, 1), at(list, 2)));
                hi = hi.max(DVec3::new(at(list, 3), at(list, 4), at(list, 5)));
                total += at(list, 6);
            }
            let empty = lo.x > hi.x;
            let extent = hi - lo;
            let axis = if empty || (extent.x >= extent.y && extent.x >= extent.z) {
                0
            } else if extent.y >= extent.z {
                1
            } else {
                2
            };
            Search {
                axis,
                low: lo[axis],
                // Half-open: the highest point lies in the last bin.
                high: next_up(hi[axis]),
                below: 0.0,
                target: total * f64::from(o.count / 2) / f64::from(o.count),
                empty,
            }
        })
        .collect()
}

/// One round of the searches: each process's histogram of each region's weight over the
/// bins of its interval, summed over the processes in rank order; the interval becomes the
/// first bin by which the weight below reaches the target.
fn narrow_searches(
    points: &[WeightedPoint],
    open: &[Open],
    searches: &mut [Search],
    gather: &mut dyn FnMut(Vec<f64>) -> Vec<Vec<f64>>,
) {
    let mut mine = vec![0.0; BINS * open.len()];
    for (i, (o, s)) in open.iter().zip(searches.iter()).enumerate() {
        let edges = s.edges();
        let bins = &mut mine[BINS * i..BINS * (i + 1)];
        for p in &points[o.points.clone()] {
            let x = p.position[s.axis];
            if !(s.low <= x && x < s.high) {
                continue;
            }
            // The bin whose edges hold x, by the edges themselves, so that a point lies in
            // the next round's interval exactly when it lay in this round's bin.
            let bin = edges[1..BINS].partition_point(|&e| e <= x);
            bins[bin] += p.weight;
        }
    }
    let all = gather(mine);
    for (i, s) in searches.iter_mut().enumerate() {
        if s.empty {
            continue;
        }
        let edges = s.edges();
        let mut below = s.below;
        // Without rounding the weights reach the target within the interval; with it, the
        // last bin takes the cut.
        let mut chosen = BINS - 1;
        for bin in 0..BINS {
            let weight: f64 = all
                .iter()
                .map(|list| list.get(BINS * i + bin).copied().unwrap_or(0.0))
                .sum();
            if below + weight >= s.target || bin == BINS - 1 {
                chosen = bin;
                break;
            }
            below += weight;
        }
        s.below = below;
        s.low = edges[chosen];
        s.high = edges[chosen + 1];
    }
}

/// Moves the points below `at` on `axis` to the front (as [`Bisection::owner`] sends them
/// low); returns how many there are.
fn partition_below(points: &mut [WeightedPoint], axis: usize, at: f64) -> usize {
    let mut low = 0;
    for i in 0..points.len() {
        if points[i].position[axis] < at {
            points.swap(low, i);
            low += 1;
        }
    }
    low
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
    use crate::distribute::Exchange;

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

    /// The regions each of `ranks` threads finds with [`Bisection::balance_across`], the
    /// points dealt out to them by `deal` (point index → process).
    fn across(
        points: &[WeightedPoint],
        ranks: usize,
        deal: impl Fn(usize) -> usize,
    ) -> Vec<Bisection> {
        let handles: Vec<_> = crate::distribute::ThreadExchange::group(ranks)
            .into_iter()
            .map(|mut ex| {
                let mut mine: Vec<WeightedPoint> = points
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| deal(i) == ex.rank())
                    .map(|(_, p)| *p)
                    .collect();
                std::thread::spawn(move || {
                    let mut gather = |numbers: Vec<f64>| {
                        let bytes = numbers.iter().flat_map(|x| x.to_le_bytes()).collect();
                        crate::distribute::all_gather(&mut ex, bytes)
                            .iter()
                            .map(|b| {
                                b.chunks_exact(8)
                                    .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                                    .collect()
                            })
                            .collect()
                    };
                    Bisection::balance_across(&mut mine, ranks, &mut gather)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    /// Each region's weight of `points` under `b`.
    fn region_weights(b: &Bisection, points: &[WeightedPoint], ranks: usize) -> Vec<f64> {
        let mut weights = vec![0.0; ranks];
        for p in points {
            weights[b.owner(p.position) as usize] += p.weight;
        }
        weights
    }

    #[test]
    fn points_spread_over_processes_are_cut_alike_on_all_and_as_evenly_as_gathered() {
        let weighted: Vec<WeightedPoint> = points(1000)
            .into_iter()
            .map(|p| WeightedPoint {
                weight: 1.0 + (p.key % 7) as f64,
                ..p
            })
            .collect();
        for ranks in 1..=7 {
            // Points dealt in turn, and all of the first half's points on the first process.
            let deals: [&dyn Fn(usize) -> usize; 2] =
                [&|i| i % ranks, &|i| if i < 500 { 0 } else { i % ranks }];
            for deal in deals {
                let found = across(&weighted, ranks, deal);
                assert!(found.iter().all(|b| *b == found[0]), "{ranks}: differ");
                let b = &found[0];
                assert_eq!(b.regions(), ranks);
                let gathered = Bisection::balance(&mut weighted.clone(), ranks);
                let total: f64 = weighted.iter().map(|p| p.weight).sum();
                let ideal = total / ranks as f64;
                let here = region_weights(b, &weighted, ranks);
                let there = region_weights(&gathered, &weighted, ranks);
                for (r, (h, t)) in here.iter().zip(&there).enumerate() {
                    // The cut of all points in one place misses its share by less than
                    // the points of one coordinate; the spread one by the points of a bin
                    // a 64⁴th of the extent wide: the same here.
                    assert!(
                        (h - ideal).abs() <= 0.05 * ideal + 12.0 * 7.0,
                        "{ranks} regions, region {r}: {h} against {ideal}"
                    );
                    assert!((h - t).abs() <= 12.0 * 7.0, "{ranks}/{r}: {h} against {t}");
                }
            }
        }
    }

    #[test]
    fn processes_without_points_take_part_in_the_cut() {
        // Three processes, the points all on the second; then none anywhere.
        let p = points(300);
        let found = across(&p, 3, |_| 1);
        assert!(found.iter().all(|b| *b == found[0]));
        let counts = region_weights(&found[0], &p, 3);
        assert!(
            counts.iter().all(|&c| (c - 100.0).abs() <= 15.0),
            "{counts:?}"
        );
        let found = across(&[], 4, |_| 0);
        assert!(found.iter().all(|b| *b == found[0] && b.regions() == 4));
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
