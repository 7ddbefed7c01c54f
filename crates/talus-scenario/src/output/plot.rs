//! Line and point plots as PNG images, for run reports.
//!
//! Rendering uses plotters' bitmap backend into an in-memory RGB buffer; the PNG is encoded
//! with the `png` crate and written atomically. Text is drawn with DejaVu Sans embedded in the
//! binary (registered with plotters as `sans-serif`), so plots look the same everywhere and no
//! system font lookup (fontconfig) happens at run time.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use plotters::backend::{BitMapBackend, RGBPixel};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::output::atomic::write_atomic;

/// Width of the image in pixels.
pub const WIDTH: u32 = 800;
/// Height of the image in pixels.
pub const HEIGHT: u32 = 600;

/// DejaVu Sans 2.37 (Bitstream Vera licence with DejaVu changes in the public domain).
static FONT: &[u8] = include_bytes!("DejaVuSans.ttf");

/// The font family name plotters uses by default, so every text element finds our font.
const FONT_FAMILY: &str = "sans-serif";

/// Colours of the series in order (Tableau 10): distinct, and still told apart with the
/// common forms of colour blindness for the first few. They repeat after ten series.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// How the points of a series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// A solid line through the points in order.
    Line,
    /// A marker at each point, not joined.
    Points,
    /// A dashed line through the points in order (for references such as analytic curves).
    Dashed,
    /// Error bars: a vertical bar from each point at an even index to the point after it,
    /// `(x, low), (x, high), …`, in the colour of the series before it and without a legend
    /// entry of its own (the spread of the series it follows).
    Spread,
}

/// One curve of a [`Plot`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// The data as `(x, y)`; non-finite points (and non-positive `y` on a log axis) are left
    /// out, and lines break there.
    pub points: Vec<(f64, f64)>,
    /// Line, markers or dashes.
    pub style: SeriesStyle,
}

/// A 2-D plot: title, axis labels and curves.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// Caption above the plot.
    pub title: String,
    /// Label of the horizontal axis, e.g. `time [s]`.
    pub x_label: String,
    /// Label of the vertical axis.
    pub y_label: String,
    /// Logarithmic vertical axis.
    pub log_y: bool,
    /// Logarithmic horizontal axis.
    pub log_x: bool,
    /// The curves, drawn in order (later ones on top).
    pub series: Vec<Series>,
}

/// Why a plot could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Writing the PNG file failed.
    #[error("cannot write plot: {0}")]
    Io(#[from] std::io::Error),
    /// Plotters failed while drawing.
    #[error("cannot draw plot: {0}")]
    Drawing(String),
    /// The image could not be encoded as PNG.
    #[error("cannot encode plot as PNG: {0}")]
    Encoding(#[from] png::EncodingError),
    /// The embedded font could not be parsed (a corrupted build).
    #[error("the embedded plot font is invalid")]
    Font,
}

/// Renders `plot` as an 800 × 600 PNG at `path`, atomically.
///
/// Axis ranges cover the finite data with a small margin; a plot without any drawable point
/// still gets axes (range 0–1, or 1–10 on a log axis).
///
/// # Errors
/// [`PlotError`] when drawing, encoding or writing fails.
pub fn render_png(path: &Path, plot: &Plot) -> Result<(), PlotError> {
    let png = render_png_bytes(plot)?;
    write_atomic(path, &png)?;
    Ok(())
}

/// Renders `plot` as PNG file content (see [`render_png`]).
///
/// # Errors
/// [`PlotError`] when drawing or encoding fails.
pub fn render_png_bytes(plot: &Plot) -> Result<Vec<u8>, PlotError> {
    register_embedded_font()?;
    let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    {
        let backend = BitMapBackend::<RGBPixel>::with_buffer_and_format(&mut rgb, (WIDTH, HEIGHT))
            .map_err(drawing_error)?;
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let (log_x, log_y) = (plot.log_x, plot.log_y);
        let drawable = |x: f64, y: f64| {
            x.abs() <= MAX_MAGNITUDE
                && y.abs() <= MAX_MAGNITUDE
                && (!log_x || x > 0.0)
                && (!log_y || y > 0.0)
        };
        let mut series: Vec<Vec<Vec<(f64, f64)>>> = plot
            .series
            .iter()
            .map(|s| drawable_runs(&s.points, drawable))
            .collect();
        let all = series.iter().flatten().flatten();
        let x_range = padded_range(all.clone().map(|p| p.0), log_x);
        let y_range = padded_range(all.map(|p| p.1), log_y);
        if log_x || log_y {
            // A log axis may have cut off the smallest values (see `padded_range`).
            let (left, bottom) = (x_range.start, y_range.start);
            series = plot
                .series
                .iter()
                .map(|s| {
                    drawable_runs(&s.points, |x, y| {
                        drawable(x, y) && (!log_x || x >= left) && (!log_y || y >= bottom)
                    })
                })
                .collect();
        }
        let legend = legend_corner(&series, &x_range, &y_range, (log_x, log_y));
        let ticks = (
            TickFormat::of(&x_range, log_x),
            TickFormat::of(&y_range, log_y),
        );
        match (log_x, log_y) {
            (false, false) => draw(&root, plot, &series, x_range, y_range, legend, ticks)?,
            (false, true) => draw(
                &root,
                plot,
                &series,
                x_range,
                y_range.log_scale(),
                legend,
                ticks,
            )?,
            (true, false) => draw(
                &root,
                plot,
                &series,
                x_range.log_scale(),
                y_range,
                legend,
                ticks,
            )?,
            (true, true) => draw(
                &root,
                plot,
                &series,
                x_range.log_scale(),
                y_range.log_scale(),
                legend,
                ticks,
            )?,
        }
        root.present().map_err(drawing_error)?;
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(png)
}

/// Registers the embedded font with plotters once per process.
fn register_embedded_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok =
        *REGISTERED.get_or_init(|| register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

fn drawing_error(e: impl std::fmt::Display) -> PlotError {
    PlotError::Drawing(e.to_string())
}

/// Splits the points into runs of points that pass `keep`; a line is broken where a point is
/// dropped rather than joined across the gap, which would suggest data that is not there.
fn drawable_runs(points: &[(f64, f64)], keep: impl Fn(f64, f64) -> bool) -> Vec<Vec<(f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for &(x, y) in points {
        match runs.last_mut() {
            // `keep` is false for NaN, whose comparisons all fail.
            Some(run) if keep(x, y) => run.push((x, y)),
            Some(run) if !run.is_empty() => runs.push(Vec::new()),
            _ => {}
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

/// The range of `values` with 5 % margin (in decades on a log axis), widened around the value
/// when all values are (nearly) equal, and a default when there are none.
///
/// Plotters computes tick positions with loops that never end when the span of a linear axis
/// overflows or a log axis spans more than about 300 decades, so the span is bounded: values
/// beyond ±[`MAX_MAGNITUDE`] are not drawn, and a log axis shows at most [`MAX_DECADES`]
/// decades below its largest value.
fn padded_range(values: impl Iterator<Item = f64>, log: bool) -> Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo > hi {
        return if log { 1.0..10.0 } else { 0.0..1.0 };
    }
    if log {
        let b = hi.log10().clamp(-LOG_LIMIT, LOG_LIMIT);
        let a = lo.log10().clamp(-LOG_LIMIT, LOG_LIMIT).max(b - MAX_DECADES);
        let pad = if b > a { 0.05 * (b - a) } else { 0.5 };
        let end_limit = LOG_LIMIT + 7.0; // the margin stays below f64::MAX and above subnormals
        return 10f64.powf((a - pad).max(-end_limit))..10f64.powf((b + pad).min(end_limit));
    }
    let (lo, hi) = (
        lo.clamp(-MAX_MAGNITUDE, MAX_MAGNITUDE),
        hi.clamp(-MAX_MAGNITUDE, MAX_MAGNITUDE),
    );
    let magnitude = lo.abs().max(hi.abs());
    // A span near the rounding error would give tick labels that all read the same.
    if hi - lo <= 1e-9 * magnitude {
        let mid = 0.5 * (lo + hi);
        let pad = if magnitude > 0.0 {
            0.05 * magnitude
        } else {
            1.0
        };
        return mid - pad..mid + pad;
    }
    let pad = 0.05 * (hi - lo);
    lo - pad..hi + pad
}

/// How the tick labels of an axis are written: plain decimals from 0.001 to 99 999, powers
/// of ten as `2.5e-5` beyond, with as many digits as the spacing of the ticks needs (at most
/// four significant ones): never the 13 digits of a rounding error, and short enough (at
/// most 8 characters on any axis of sensible range) not to run into the axis title.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickFormat {
    /// Decimal exponent of the tick spacing (about a tenth of the range); `None` on a log
    /// axis, whose ticks are 1–9 times powers of ten.
    step_exponent: Option<i32>,
}

/// Range of magnitudes written as plain decimals.
const PLAIN: Range<f64> = 1e-3..1e5;

impl TickFormat {
    /// The format for an axis over `range`.
    #[must_use]
    pub fn of(range: &Range<f64>, log: bool) -> TickFormat {
        let span = (range.end - range.start).abs();
        let step_exponent =
            (!log && span.is_finite() && span > 0.0).then(|| (span / 10.0).log10().floor() as i32);
        TickFormat { step_exponent }
    }

    /// The label of the tick at `v`.
    #[must_use]
    pub fn label(&self, v: f64) -> String {
        if !v.is_finite() {
            return String::new();
        }
        let magnitude = v.abs();
        // Ticks of a linear axis are multiples of the step: a value a rounding error off
        // zero is zero.
        let zero_below = self.step_exponent.map_or(0.0, |e| 10f64.powi(e - 3));
        if v == 0.0 || magnitude < zero_below {
            return "0".into();
        }
        let exponent = magnitude.log10().floor() as i32;
        // Digits after the point of the mantissa (scientific) or of the number (plain).
        let significant = |digits: i32| digits.clamp(0, 3) as usize;
        if PLAIN.contains(&magnitude) {
            let decimals = match self.step_exponent {
                Some(step) => (-step).clamp(0, 6) as usize,
                None => significant(2 - exponent).max(significant(-exponent + 1)),
            };
            return trim_zeros(format!("{v:.decimals$}"));
        }
        let decimals = match self.step_exponent {
            Some(step) => significant(exponent - step),
            None => 1,
        };
        let mut mantissa = v / 10f64.powi(exponent);
        let mut exponent = exponent;
        // 9.9999… rounds up to the next power of ten.
        let rounded: f64 = format!("{mantissa:.decimals$}").parse().unwrap_or(mantissa);
        if rounded.abs() >= 10.0 {
            mantissa /= 10.0;
            exponent += 1;
        }
        format!(
            "{}e{exponent}",
            trim_zeros(format!("{mantissa:.decimals$}"))
        )
    }
}

/// `text` (a decimal number) without trailing zeros after its point, nor a bare point.
fn trim_zeros(text: String) -> String {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Largest magnitude of a value drawn on a linear axis (see [`padded_range`]).
const MAX_MAGNITUDE: f64 = 1e300;
/// Largest number of decades a log axis covers before its margins (see [`padded_range`]).
const MAX_DECADES: f64 = 250.0;
/// Bound of the decimal exponent of the data range of a log axis.
const LOG_LIMIT: f64 = 300.0;

type Area<'a> = DrawingArea<BitMapBackend<'a, RGBPixel>, Shift>;

/// Share of the plot's width and height a legend box takes, about (for a few entries).
const LEGEND_SHARE: (f64, f64) = (0.5, 0.25);

/// The first corner of upper right, upper left, lower right and lower left whose legend-sized
/// box holds no data point, so that the legend hides none; upper right when every corner has
/// one.
fn legend_corner(
    series: &[Vec<Vec<(f64, f64)>>],
    x: &Range<f64>,
    y: &Range<f64>,
    (log_x, log_y): (bool, bool),
) -> SeriesLabelPosition {
    let along = |v: f64, r: &Range<f64>, log: bool| {
        if log {
            (v.log10() - r.start.log10()) / (r.end.log10() - r.start.log10())
        } else {
            (v - r.start) / (r.end - r.start)
        }
    };
    let points: Vec<(f64, f64)> = series
        .iter()
        .flatten()
        .flatten()
        .map(|&(px, py)| (along(px, x, log_x), along(py, y, log_y)))
        .collect();
    let (w, h) = LEGEND_SHARE;
    let free = |right: bool, upper: bool| {
        !points.iter().any(|&(fx, fy)| {
            let in_x = if right { fx > 1.0 - w } else { fx < w };
            let in_y = if upper { fy > 1.0 - h } else { fy < h };
            in_x && in_y
        })
    };
    [
        (true, true, SeriesLabelPosition::UpperRight),
        (false, true, SeriesLabelPosition::UpperLeft),
        (true, false, SeriesLabelPosition::LowerRight),
        (false, false, SeriesLabelPosition::LowerLeft),
    ]
    .into_iter()
    .find(|&(right, upper, _)| free(right, upper))
    .map_or(SeriesLabelPosition::UpperRight, |(_, _, p)| p)
}

/// Draws axes, series and legend; generic over the coordinates (linear or log).
fn draw<X, Y>(
    root: &Area,
    plot: &Plot,
    series: &[Vec<Vec<(f64, f64)>>],
    x_spec: X,
    y_spec: Y,
    legend: SeriesLabelPosition,
    ticks: (TickFormat, TickFormat),
) -> Result<(), PlotError>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT_FAMILY, 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(drawing_error)?;
    let (x_ticks, y_ticks) = ticks;
    let x_label = |v: &f64| x_ticks.label(*v);
    let y_label = |v: &f64| y_ticks.label(*v);
    chart
        .configure_mesh()
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .label_style((FONT_FAMILY, 14))
        .axis_desc_style((FONT_FAMILY, 16))
        .draw()
        .map_err(drawing_error)?;

    let mut colour_index = None::<usize>;
    for (spec, runs) in plot.series.iter().zip(series) {
        if spec.style != SeriesStyle::Spread || colour_index.is_none() {
            colour_index = Some(colour_index.map_or(0, |k| k + 1));
        }
        let colour = PALETTE[colour_index.unwrap_or(0) % PALETTE.len()];
        let line = colour.stroke_width(2);
        if spec.style == SeriesStyle::Spread {
            // Bars from the pairs of points; a pair with a point left out is not drawn.
            let drawn: Vec<(f64, f64)> = runs.iter().flatten().copied().collect();
            let bars = spec
                .points
                .chunks_exact(2)
                .filter(|pair| drawn.contains(&pair[0]) && drawn.contains(&pair[1]))
                .map(|pair| PathElement::new(vec![pair[0], pair[1]], line));
            chart.draw_series(bars).map_err(drawing_error)?;
            continue;
        }
        for (r, run) in runs.iter().enumerate() {
            let annotation = match spec.style {
                SeriesStyle::Line => chart
                    .draw_series(LineSeries::new(run.iter().copied(), line))
                    .map_err(drawing_error)?,
                SeriesStyle::Dashed => chart
                    .draw_series(DashedLineSeries::new(run.iter().copied(), 8, 5, line))
                    .map_err(drawing_error)?,
                SeriesStyle::Points | SeriesStyle::Spread => chart
                    .draw_series(run.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(drawing_error)?,
            };
            // One legend entry per series, attached to its first run.
            // The legend sample matches the style: a line, a dashed line or a marker. Each
            // arm has its own closure because plotters' boxed `DynElement` would need a
            // `'static` backend.
            if r == 0 {
                let annotation = annotation.label(spec.label.as_str());
                match spec.style {
                    SeriesStyle::Line => {
                        annotation.legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], line)
                        });
                    }
                    SeriesStyle::Dashed => {
                        annotation.legend(move |(x, y)| {
                            EmptyElement::at((x, y))
                                + PathElement::new(vec![(0, 0), (7, 0)], line)
                                + PathElement::new(vec![(13, 0), (20, 0)], line)
                        });
                    }
                    SeriesStyle::Points | SeriesStyle::Spread => {
                        annotation.legend(move |(x, y)| {
                            EmptyElement::at((x + 10, y)) + Circle::new((0, 0), 3, colour.filled())
                        });
                    }
                }
            }
        }
    }
    if series.iter().any(|runs| !runs.is_empty()) {
        chart
            .configure_series_labels()
            .label_font((FONT_FAMILY, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(legend)
            .draw()
            .map_err(drawing_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_png(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!(
            "talus-output-plot-{name}-{}.png",
            std::process::id()
        ))
    }

    /// Decodes with the `png` crate's decoder (independent of plotters) and returns the size
    /// and the RGB pixels.
    fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        pixels.truncate(info.buffer_size());
        (info.width, info.height, pixels)
    }

    fn count_colour(pixels: &[u8], colour: RGBColor) -> usize {
        pixels
            .chunks_exact(3)
            .filter(|p| p == &[colour.0, colour.1, colour.2])
            .count()
    }

    #[test]
    fn renders_all_styles() {
        let xs: Vec<f64> = (0..50).map(|k| k as f64 * 0.1).collect();
        let plot = Plot {
            title: "Kinetic energy".into(),
            x_label: "time [s]".into(),
            y_label: "energy [J]".into(),
            log_y: false,
            log_x: false,
            series: vec![
                Series {
                    label: "simulation".into(),
                    points: xs.iter().map(|&x| (x, x.sin())).collect(),
                    style: SeriesStyle::Line,
                },
                Series {
                    label: "samples".into(),
                    points: xs.iter().map(|&x| (x, 0.5 * x.cos())).collect(),
                    style: SeriesStyle::Points,
                },
                Series {
                    label: "analytic".into(),
                    points: xs
                        .iter()
                        .map(|&x| {
                            (
                                x,
                                if x > 2.0 && x < 2.5 {
                                    f64::NAN
                                } else {
                                    0.1 * x
                                },
                            )
                        })
                        .collect(),
                    style: SeriesStyle::Dashed,
                },
            ],
        };
        let path = temp_png("styles");
        render_png(&path, &plot).unwrap();
        let (w, h, pixels) = decode(&path);
        assert_eq!((w, h), (800, 600));
        let non_white = pixels
            .chunks_exact(3)
            .filter(|p| p != &[255, 255, 255])
            .count();
        assert!(non_white > 5_000, "only {non_white} drawn pixels");
        for colour in &PALETTE[..3] {
            assert!(
                count_colour(&pixels, *colour) > 50,
                "series colour {colour:?} missing"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn spread_bars_take_the_colour_of_their_series() {
        let plot = |bars: Vec<(f64, f64)>| Plot {
            title: "Spread".into(),
            x_label: "x [1]".into(),
            y_label: "y [1]".into(),
            log_y: false,
            log_x: false,
            series: vec![
                Series {
                    label: "mean".into(),
                    points: vec![(0.0, 0.0), (1.0, 1.0)],
                    style: SeriesStyle::Points,
                },
                Series {
                    label: String::new(),
                    points: bars,
                    style: SeriesStyle::Spread,
                },
                Series {
                    label: "other".into(),
                    points: vec![(0.0, 1.0)],
                    style: SeriesStyle::Points,
                },
            ],
        };
        let path = temp_png("spread");
        render_png(&path, &plot(Vec::new())).unwrap();
        let (_, _, without) = decode(&path);
        // Two bars of 80 % of the axis height each (and a pair with a NaN, left out).
        render_png(
            &path,
            &plot(vec![
                (0.0, 0.1),
                (0.0, 0.9),
                (1.0, 0.1),
                (1.0, 0.9),
                (0.5, f64::NAN),
                (0.5, 1.0),
            ]),
        )
        .unwrap();
        let (_, _, with) = decode(&path);
        let first = count_colour(&with, PALETTE[0]) - count_colour(&without, PALETTE[0]);
        // Each bar is 2 pixels wide and about 0.8 / 1.1 of the ~460-pixel plot area high.
        assert!(first > 2 * 2 * 250, "{first} pixels of the bars");
        // The third series keeps the second colour: the bars do not take one of their own.
        assert!(count_colour(&with, PALETTE[1]) > 0);
        assert_eq!(count_colour(&with, PALETTE[2]), 0);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn log_axis_skips_non_positive_values() {
        let plot = Plot {
            title: "Residual".into(),
            x_label: "step [1]".into(),
            y_label: "residual [1]".into(),
            log_y: true,
            log_x: false,
            series: vec![Series {
                label: "r".into(),
                points: vec![
                    (0.0, 1.0),
                    (1.0, 0.0),
                    (2.0, 1e-3),
                    (3.0, -1.0),
                    (4.0, 1e-6),
                ],
                style: SeriesStyle::Line,
            }],
        };
        let path = temp_png("log");
        render_png(&path, &plot).unwrap();
        let (_, _, pixels) = decode(&path);
        assert!(count_colour(&pixels, PALETTE[0]) > 20);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn empty_and_degenerate_plots_render() {
        let path = temp_png("empty");
        let mut plot = Plot {
            title: "Nothing yet".into(),
            x_label: "x [1]".into(),
            y_label: "y [1]".into(),
            log_y: false,
            log_x: false,
            series: vec![Series {
                label: "none".into(),
                points: vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)],
                style: SeriesStyle::Line,
            }],
        };
        for log_y in [false, true] {
            plot.log_y = log_y;
            render_png(&path, &plot).unwrap();
            let (w, h, pixels) = decode(&path);
            assert_eq!((w, h), (WIDTH, HEIGHT));
            assert!(pixels.iter().any(|&b| b != 255), "axes are drawn");
        }
        // A single point, a constant series and extreme magnitudes, with every style (the
        // dashed one would take forever on a line millions of pixels long).
        for points in [
            vec![(2.0, 3.0)],
            vec![(0.0, 0.0), (1.0, 0.0)],
            vec![(1.0, 1.0), (2.0, 1.0 + 1e-15)],
            vec![(-f64::MAX, f64::MAX), (0.0, 1.0), (f64::MAX, -f64::MAX)],
            vec![(-1e300, -1e300), (1e300, 1e300)],
            vec![(0.0, 1e-300), (1e-300, 2e-300), (1.0, 5e-324)],
            vec![(0.0, 1e-320), (1.0, 1e-200), (2.0, 1.0), (3.0, f64::MAX)],
        ] {
            for style in [SeriesStyle::Line, SeriesStyle::Dashed] {
                for log_y in [false, true] {
                    plot.log_y = log_y;
                    plot.series[0].points.clone_from(&points);
                    plot.series[0].style = style;
                    render_png_bytes(&plot).unwrap();
                }
            }
        }
        plot.series.clear();
        render_png(&path, &plot).unwrap();
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_legend_goes_to_a_corner_without_data() {
        let runs = |points: &[(f64, f64)]| vec![vec![points.to_vec()]];
        let (x, y) = (0.0..1.0, 0.0..1.0);
        let corner = |points: &[(f64, f64)]| legend_corner(&runs(points), &x, &y, (false, false));
        assert!(matches!(
            corner(&[(0.1, 0.1)]),
            SeriesLabelPosition::UpperRight
        ));
        assert!(matches!(
            corner(&[(0.9, 0.9)]),
            SeriesLabelPosition::UpperLeft
        ));
        assert!(matches!(
            corner(&[(0.9, 0.9), (0.1, 0.9)]),
            SeriesLabelPosition::LowerRight
        ));
        assert!(matches!(
            corner(&[(0.9, 0.9), (0.1, 0.9), (0.9, 0.1)]),
            SeriesLabelPosition::LowerLeft
        ));
        assert!(matches!(
            corner(&[(0.9, 0.9), (0.1, 0.9), (0.9, 0.1), (0.1, 0.1)]),
            SeriesLabelPosition::UpperRight
        ));
    }

    #[test]
    fn tick_labels_are_short_and_tell_neighbouring_ticks_apart() {
        // Ranges as runs produce them: tiny forces, times, heights, large counts, spans
        // about zero, and a rounding error next to a power of ten.
        let ranges = [
            (0.0, 1.0),
            (-0.02, 0.3),
            (9.5e-5, 1.05e-4),
            (0.0, 3.2e-5),
            (1.0, 2.0),
            (-1e-7, 1e-7),
            (1000.0, 250_000.0),
            (0.047, 0.053),
            (12.0, 13.5),
            (-4.0e6, 2.0e6),
        ];
        for (lo, hi) in ranges {
            let f = TickFormat::of(&(lo..hi), false);
            let step = 10f64.powi(f.step_exponent.unwrap());
            let first = (lo / step).ceil() as i64;
            let last = (hi / step).floor() as i64;
            let labels: Vec<String> = (first..=last).map(|k| f.label(k as f64 * step)).collect();
            for l in &labels {
                assert!(l.len() <= 8, "{lo}..{hi}: {l:?} is too long");
                assert!(!l.contains("000000"), "{lo}..{hi}: {l:?}");
            }
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), labels.len(), "{lo}..{hi}: {labels:?}");
        }
        let f = TickFormat::of(&(0.0..2e-4), false);
        assert_eq!(f.label(9.999999999999e-5), "1e-4");
        assert_eq!(f.label(1.5e-4), "1.5e-4");
        assert_eq!(f.label(1e-20), "0");
        let f = TickFormat::of(&(0.0..1.0), false);
        assert_eq!(f.label(0.30000000000000004), "0.3");
        assert_eq!(f.label(-0.1), "-0.1");
        let log = TickFormat::of(&(1e-9..1e3), true);
        for (v, text) in [
            (1e-9, "1e-9"),
            (2e-9, "2e-9"),
            (0.001, "0.001"),
            (0.5, "0.5"),
            (30.0, "30"),
            (100.0, "100"),
            (1e5, "1e5"),
        ] {
            assert_eq!(log.label(v), text);
        }
    }

    #[test]
    fn log_log_plot_draws_a_power_law_as_a_straight_line() {
        // P = f^-1.5 from 1 to 1000 on log-log axes: the drawn pixels of the line lie on
        // one straight line (within a pixel or two).
        let points: Vec<(f64, f64)> = (0..=60)
            .map(|k| {
                let f = 10f64.powf(f64::from(k) / 20.0);
                (f, f.powf(-1.5))
            })
            .collect();
        let plot = Plot {
            title: "power law".into(),
            x_label: "f [Hz]".into(),
            y_label: "P".into(),
            log_y: true,
            log_x: true,
            series: vec![Series {
                label: "f^-1.5".into(),
                points,
                style: SeriesStyle::Line,
            }],
        };
        let path = temp_png("loglog");
        render_png(&path, &plot).unwrap();
        let (w, _, pixels) = decode(&path);
        let blue = PALETTE[0];
        let mut xy = Vec::new();
        for (i, p) in pixels.chunks_exact(3).enumerate() {
            if p == [blue.0, blue.1, blue.2] {
                xy.push(((i as u32 % w) as f64, (i as u32 / w) as f64));
            }
        }
        assert!(xy.len() > 200, "the line is drawn");
        // Without the legend's sample line, in the upper right corner the curve leaves free.
        xy.retain(|&(x, y)| x < 0.8 * f64::from(w) || y > 0.25 * f64::from(HEIGHT));
        let fit = crate::analysis::fit::fit_line(&xy).unwrap();
        assert!(
            fit.r_squared > 0.995,
            "not straight: r² = {}",
            fit.r_squared
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn padded_range_handles_degenerate_input() {
        let r = padded_range([1e-320, 1e300].into_iter(), true);
        assert!(r.start > 0.0 && r.end.is_finite() && (r.end / r.start).log10() < 300.0);
        let r = padded_range([f64::MAX, f64::MAX].into_iter(), true);
        assert!(r.start > 0.0 && r.end.is_finite() && (r.end / r.start).log10() < 300.0);
        let r = padded_range([-f64::MAX, f64::MAX].into_iter(), false);
        assert!((r.end - r.start).is_finite());
        assert_eq!(padded_range(std::iter::empty(), false), 0.0..1.0);
        assert_eq!(padded_range(std::iter::empty(), true), 1.0..10.0);
        let r = padded_range([5.0, 5.0].into_iter(), false);
        assert!(r.start < 5.0 && r.end > 5.0);
        let r = padded_range([0.0].into_iter(), false);
        assert!(r.start < 0.0 && r.end > 0.0);
        let r = padded_range([1e-3, 1e3].into_iter(), true);
        assert!(r.start < 1e-3 && r.end > 1e3);
    }
}
