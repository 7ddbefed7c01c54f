//! The sweep's plots: each answer against each varied key, the mean over the seeds with
//! bars of one standard deviation either side, one curve per combination of the other
//! keys' values.

use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::sweep::grid::Axis;
use crate::sweep::table::GridStats;

/// The positions of `axis`'s values along a plot's horizontal axis: the values themselves
/// when they are all numbers, else their indices (with the label saying which is which).
fn positions(axis: &Axis) -> (Vec<f64>, String) {
    let numbers: Option<Vec<f64>> = axis
        .values
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    match numbers {
        Some(xs) => (xs, axis.key.clone()),
        None => {
            let legend: Vec<String> = axis
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{i} = {v}"))
                .collect();
            (
                (0..axis.values.len()).map(|i| i as f64).collect(),
                format!("{} ({})", axis.key, legend.join(", ")),
            )
        }
    }
}

/// How the file stem of every plot against axis `a` ends: `_vs_<axis>`, with the axis'
/// index when two axes share a short name.
#[must_use]
pub fn stem_ending(axes: &[Axis], a: usize) -> String {
    let short = axes[a].short_name();
    let shared = axes.iter().filter(|x| x.short_name() == short).count() > 1;
    if shared {
        format!("_vs_{short}{a}")
    } else {
        format!("_vs_{short}")
    }
}

/// The plot of answer `k` (named `key`) against axis `a`, and its file stem
/// `<answer>_vs_<axis>` (with the axis' index when two axes share a short name).
#[must_use]
pub fn answer_plot(
    axes: &[Axis],
    a: usize,
    key: &str,
    k: usize,
    stats: &[GridStats],
) -> (String, Plot) {
    let axis = &axes[a];
    let (xs, x_label) = positions(axis);
    // One curve per combination of the other axes' values, in the order met; its points
    // are (x, mean, sd).
    type Curve<'a> = (Vec<&'a str>, Vec<(f64, f64, f64)>);
    let mut curves: Vec<Curve> = Vec::new();
    for s in stats {
        let others: Vec<&str> = s
            .values
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != a)
            .map(|(_, v)| v.as_str())
            .collect();
        let Some(x) = axis
            .values
            .iter()
            .position(|v| *v == s.values[a])
            .map(|i| xs[i])
        else {
            continue;
        };
        let spread = s.answers[k];
        let point = (x, spread.mean, spread.sd);
        match curves.iter_mut().find(|(o, _)| *o == others) {
            Some((_, points)) => points.push(point),
            None => curves.push((others, vec![point])),
        }
    }
    let other_axes: Vec<&Axis> = axes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != a)
        .map(|(_, x)| x)
        .collect();
    let mut series = Vec::new();
    for (others, mut points) in curves {
        points.sort_by(|p, q| p.0.total_cmp(&q.0));
        let label = if others.is_empty() {
            "mean ± sd over seeds".to_string()
        } else {
            other_axes
                .iter()
                .zip(&others)
                .map(|(x, v)| format!("{}={v}", x.short_name()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        series.push(Series {
            label,
            points: points.iter().map(|&(x, m, _)| (x, m)).collect(),
            style: SeriesStyle::Line,
        });
        series.push(Series {
            label: String::new(),
            points: points
                .iter()
                .flat_map(|&(x, m, sd)| [(x, m - sd), (x, m + sd)])
                .collect(),
            style: SeriesStyle::Spread,
        });
    }
    let short = axis.short_name();
    let stem = format!("{key}{}", stem_ending(axes, a));
    let plot = Plot {
        title: format!("{key} against {short}"),
        x_label,
        y_label: key.to_string(),
        log_y: false,
        log_x: false,
        series,
    };
    (stem, plot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::table::Spread;

    #[test]
    fn one_curve_per_value_of_the_other_axis() {
        let axes = [
            Axis::parse("a.mu=0.2,0.4").unwrap(),
            Axis::parse("integrator=Gear,Verlet").unwrap(),
        ];
        let stat = |a: &str, b: &str, mean: f64| GridStats {
            values: vec![a.into(), b.into()],
            runs: 2,
            answered: 2,
            suspect: 0,
            answers: vec![Spread {
                n: 2,
                mean,
                sd: 0.5,
            }],
        };
        let stats = [
            stat("0.2", "Gear", 1.0),
            stat("0.2", "Verlet", 2.0),
            stat("0.4", "Gear", 3.0),
            stat("0.4", "Verlet", 4.0),
        ];
        let (stem, plot) = answer_plot(&axes, 0, "angle", 0, &stats);
        assert_eq!(stem, "angle_vs_mu");
        assert_eq!(plot.series.len(), 4);
        assert_eq!(plot.series[0].label, "integrator=Gear");
        assert_eq!(plot.series[0].points, vec![(0.2, 1.0), (0.4, 3.0)]);
        assert_eq!(
            plot.series[1].points,
            vec![(0.2, 0.5), (0.2, 1.5), (0.4, 2.5), (0.4, 3.5)]
        );
        let (stem, plot) = answer_plot(&axes, 1, "angle", 0, &stats);
        assert_eq!(stem, "angle_vs_integrator");
        assert!(plot.x_label.contains("0 = Gear, 1 = Verlet"));
        assert_eq!(plot.series[0].label, "mu=0.2");
        assert_eq!(plot.series[0].points, vec![(0.0, 1.0), (1.0, 2.0)]);
    }
}
