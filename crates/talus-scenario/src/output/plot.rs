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
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
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
        // Ticks and grid where the formats put them: plotters leaves out every tick below
        // 2.2e-16 on a log axis and places those of a linear one off round numbers there.
        let (x_ticks, y_ticks) = (&ticks.0, &ticks.1);
        type Linear = Axis<RangedCoordf64>;
        type Log = Axis<LogCoord<f64>>;
        match (log_x, log_y) {
            (false, false) => draw(
                &root,
                plot,
                &series,
                Linear::new(x_range, x_ticks),
                Linear::new(y_range, y_ticks),
                legend,
                ticks,
            )?,
            (false, true) => draw(
                &root,
                plot,
                &series,
                Linear::new(x_range, x_ticks),
                Log::new(y_range.log_scale(), y_ticks),
                legend,
                ticks,
            )?,
            (true, false) => draw(
                &root,
                plot,
                &series,
                Log::new(x_range.log_scale(), x_ticks),
                Linear::new(y_range, y_ticks),
                legend,
                ticks,
            )?,
            (true, true) => draw(
                &root,
                plot,
                &series,
                Log::new(x_range.log_scale(), x_ticks),
                Log::new(y_range.log_scale(), y_ticks),
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

/// An axis (linear or log, `inner` maps its values to pixels) whose ticks and grid lines
/// are where its [`TickFormat`] puts them.
struct Axis<R> {
    /// The mapping of values to pixels.
    inner: R,
    /// The values of the labelled ticks.
    ticks: Vec<f64>,
    /// The values of the light grid lines.
    light: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Axis<R> {
    fn new(inner: impl Into<R>, format: &TickFormat) -> Self {
        Axis {
            inner: inner.into(),
            ticks: format.ticks(),
            light: format.light_lines(),
        }
    }
}

impl<R: Ranged<ValueType = f64>> Ranged for Axis<R> {
    // The labels are written by `TickFormat::label`; the default is never used.
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
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
        // Values a billionth apart are equal, as on a linear axis: ticks closer than that
        // are as far apart as the rounding of the values they stand for.
        let pad = if (b - a) * std::f64::consts::LN_10 > 1e-9 {
            0.05 * (b - a)
        } else {
            0.5
        };
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

/// Where the ticks of an axis go and how they are labelled: never longer than
/// [`MAX_TICK_LABEL`] characters, so that they never run into the axis title, and
/// neighbouring ticks always told apart.
///
/// The ticks are placed here rather than by plotters, which leaves out every tick below
/// 2.2e-16 on a log axis and places those of a linear axis off round numbers there. A log
/// axis has its ticks at powers of ten (and 2 to 9 times them, or 2 and 5 times them, where
/// the axis has room), written `5e-7`, `0.02`, `300`; one too narrow for two of them is
/// treated as linear. A linear axis has its ticks at the multiples of a round spacing (1, 2
/// or 5 times a power of ten, at most [`TICKS`] of them), each written exactly to the
/// decimal place of the spacing: plain decimals from 0.001 to 99 999, powers of ten as
/// `2.5e-5` beyond, never the 13 digits of a rounding error. An axis so narrow for its
/// magnitude that some tick would need more characters (`-12.000001`, `-1.25e-300`) is
/// written as a small whole number of units from a round offset instead,
/// `tick × 1e-6 + 12` (the title says so, see [`TickFormat::axis_note`]): the digits the
/// ticks share go to the title, once, and the labels keep those that tell them apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickFormat {
    /// The axis, lowest value first.
    range: (f64, f64),
    /// The spacing of the ticks, `mantissa` (1, 2 or 5) × 10^`exponent`; `None` on a log
    /// axis with ticks at 1–9 times powers of ten.
    step: Option<(i64, i32)>,
    /// The offset the ticks are counted from when the exact labels would be too long;
    /// `None` when they are not.
    offset: Option<Offset>,
}

/// An axis written as whole units from an offset: the tick at v reads (v − value) / unit.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Offset {
    /// The offset: `mantissa` × 10^`exponent`, a round number near the middle of the axis.
    mantissa: i64,
    /// See `mantissa`.
    exponent: i32,
}

impl Offset {
    fn value(self) -> f64 {
        decimal(self.mantissa, self.exponent)
    }
}

/// 10 to the power `e`: exact up to 10²², also where it is subnormal (`powi` takes the
/// reciprocal of a power that overflows there and gives 0).
fn pow10(e: i32) -> f64 {
    if (0..=22).contains(&e) {
        10f64.powi(e)
    } else {
        10f64.powf(f64::from(e))
    }
}

/// `units` × 10^`exponent`, by dividing by (or multiplying with) positive powers of ten: the
/// double nearest the decimal where 10^|exponent| is exact (dividing by 10³ gives the
/// double nearest 0.001 × units, multiplying by 0.001 may not), and a few roundings off it
/// elsewhere, even for a unit below the smallest normal double, whose own few digits would
/// put the result a sizeable part of a unit off.
fn decimal(units: i64, exponent: i32) -> f64 {
    let x = units as f64;
    if exponent >= 0 {
        let first = exponent.min(300);
        x * pow10(first) * pow10(exponent - first)
    } else {
        let first = (-exponent).min(300);
        x / pow10(first) / pow10(-exponent - first)
    }
}

/// `x` / 10^`exponent` (`x` in units of 10^`exponent`), as [`decimal`] computes its inverse.
fn in_units(x: f64, exponent: i32) -> f64 {
    if exponent >= 0 {
        let first = exponent.min(300);
        x / pow10(first) / pow10(exponent - first)
    } else {
        let first = (-exponent).min(300);
        x * pow10(first) * pow10(-exponent - first)
    }
}

/// Most ticks labelled on an axis.
pub const TICKS: usize = 11;

/// Lines of the light grid per tick, about.
const LIGHT_LINES: usize = 10;

/// The longest tick label: longer ones run into the title of a vertical axis.
pub const MAX_TICK_LABEL: usize = 8;

/// Decimal exponents of the magnitudes written as plain decimals (0.001 to 99 999).
const PLAIN_EXPONENTS: std::ops::RangeInclusive<i32> = -3..=4;

/// Largest magnitude (in units of the tick spacing) placed and written exactly: beyond it
/// an `i64` and an `f64` no longer hold every whole number. An axis padded by
/// [`padded_range`] stays far below it (it spans at least a billionth of its magnitude).
const MAX_UNITS: f64 = 1e15;

/// The spacing of at most `max` ticks over `lo..hi`: the smallest of 1, 2 and 5 times a
/// power of ten that puts no more there, as (mantissa, exponent); `None` for an empty or
/// non-finite range.
fn tick_step(lo: f64, hi: f64, max: usize) -> Option<(i64, i32)> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return None;
    }
    let count = |(c, e): (i64, i32)| {
        let (lo, hi) = (in_units(lo, e) / c as f64, in_units(hi, e) / c as f64);
        hi.floor() - lo.ceil() + 1.0
    };
    // Wider than the range: one tick at most.
    let mut best = (1, span.log10().floor() as i32 + 1);
    // Each finer spacing is 2 to 2.5 times finer: a few dozen steps reach any count.
    for _ in 0..100 {
        let (c, e) = best;
        let finer = match c {
            1 => (5, e - 1),
            5 => (2, e),
            _ => (1, e),
        };
        // Also stops at a spacing that underflows (a count that is not a number).
        let n = count(finer);
        if n.is_nan() || n > max as f64 {
            break;
        }
        best = finer;
    }
    Some(best)
}

/// The multiples of `step` (mantissa, exponent) in `lo..=hi`, as (units of 10^exponent,
/// value); none when they are too many or too large to count exactly.
fn multiples(lo: f64, hi: f64, (c, e): (i64, i32)) -> Vec<(i64, f64)> {
    let c_units = c as f64;
    let (first, last) = (
        (in_units(lo, e) / c_units).ceil(),
        (in_units(hi, e) / c_units).floor(),
    );
    if !(first.abs() < MAX_UNITS && last.abs() < MAX_UNITS && last - first < 10_000.0) {
        return Vec::new();
    }
    (first as i64..=last as i64)
        .map(|k| {
            let units = k * c;
            (units, decimal(units, e))
        })
        .filter(|(_, v)| (lo..=hi).contains(v))
        .collect()
}

/// At most `max` ticks of a log axis over `lo..hi`: the finest of 1 to 9, 1, 2 and 5, or 1
/// times the powers of ten that puts no more there, or every so many powers of ten.
fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let times = |digits: &[i64], every: i32| -> Vec<f64> {
        (first..=last)
            .filter(|k| k.rem_euclid(every) == 0)
            .flat_map(|k| digits.iter().map(move |&d| decimal(d, k)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    for digits in [&[1, 2, 3, 4, 5, 6, 7, 8, 9][..], &[1, 2, 5], &[1]] {
        let ticks = times(digits, 1);
        if ticks.len() <= max {
            return ticks;
        }
    }
    // More decades than ticks: every so many.
    let decades = (last - first + 1) as usize;
    times(&[1], decades.div_ceil(max).max(1) as i32)
}

impl TickFormat {
    /// The ticks and labels of an axis over `range`.
    #[must_use]
    pub fn of(range: &Range<f64>, log: bool) -> TickFormat {
        let (lo, hi) = (range.start.min(range.end), range.start.max(range.end));
        if log && log_ticks(lo, hi, TICKS).len() >= 2 {
            return TickFormat {
                range: (lo, hi),
                step: None,
                offset: None,
            };
        }
        let step = tick_step(lo, hi, TICKS);
        let offset = step.and_then(|(c, e)| {
            let exact = multiples(lo, hi, (c, e))
                .iter()
                .all(|&(units, _)| exact_label(units, e).chars().count() <= MAX_TICK_LABEL);
            (!exact).then(|| {
                // A round number near the middle, a multiple of ten units: the labels are
                // then whole numbers of at most two digits and a sign (at most 11 ticks at
                // most 5 units apart span less than 60 units).
                let middle = in_units(0.5 * (lo + hi), e + 1);
                Offset {
                    mantissa: middle.round().clamp(-MAX_UNITS, MAX_UNITS) as i64,
                    exponent: e + 1,
                }
            })
        });
        TickFormat {
            range: (lo, hi),
            step,
            offset,
        }
    }

    /// The values of the labelled ticks, in order.
    #[must_use]
    pub fn ticks(&self) -> Vec<f64> {
        let (lo, hi) = self.range;
        match self.step {
            Some(step) => multiples(lo, hi, step)
                .into_iter()
                .map(|(_, v)| v)
                .collect(),
            None => log_ticks(lo, hi, TICKS),
        }
    }

    /// The values of the lines of the light grid: about [`LIGHT_LINES`] per tick on a linear
    /// axis, on the same round multiples; 1 to 9 times the powers of ten on a log one.
    #[must_use]
    pub fn light_lines(&self) -> Vec<f64> {
        let (lo, hi) = self.range;
        match self.step {
            Some(_) => tick_step(lo, hi, TICKS * LIGHT_LINES)
                .map(|step| {
                    multiples(lo, hi, step)
                        .into_iter()
                        .map(|(_, v)| v)
                        .collect()
                })
                .unwrap_or_default(),
            None => log_ticks(lo, hi, TICKS * LIGHT_LINES),
        }
    }

    /// What the title of the axis must add for the labels to be read, when they count units
    /// from an offset: `tick × 1e-6 + 12` (the value at a tick is its label times 1e-6, plus
    /// 12); `None` when the labels are the values.
    #[must_use]
    pub fn axis_note(&self) -> Option<String> {
        let ((_, e), offset) = (self.step?, self.offset?);
        let scale = format!("tick × 1e{e}");
        Some(match offset.mantissa {
            0 => scale,
            m if m < 0 => format!(
                "{scale} − {}",
                exact_label(m.saturating_neg(), offset.exponent)
            ),
            m => format!("{scale} + {}", exact_label(m, offset.exponent)),
        })
    }

    /// The label of the tick at `v`.
    #[must_use]
    pub fn label(&self, v: f64) -> String {
        if !v.is_finite() {
            return String::new();
        }
        let Some((_, e)) = self.step else {
            return log_label(v);
        };
        // Ticks of a linear axis are multiples of the unit: a value a rounding error off
        // one is that one.
        match self.offset {
            Some(offset) => {
                let units = in_units(v - offset.value(), e).round();
                format!("{}", units.clamp(-MAX_UNITS, MAX_UNITS) as i64)
            }
            None => exact_label(
                in_units(v, e).round().clamp(-MAX_UNITS, MAX_UNITS) as i64,
                e,
            ),
        }
    }
}

/// The label of a tick of a log axis (1 to 9 times a power of ten) or of an axis without a
/// spacing: plain from 0.001 to 99 999 with up to three decimals, `2.5e-5` beyond.
fn log_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exponent = v.abs().log10().floor() as i32;
    if PLAIN_EXPONENTS.contains(&exponent) {
        let decimals = (2 - exponent).clamp(0, 3) as usize;
        return trim_zeros(format!("{v:.decimals$}"));
    }
    let scientific = |decimals: usize| {
        let mut mantissa = v / 10f64.powi(exponent);
        let mut exponent = exponent;
        // 9.96 rounds up to the next power of ten.
        let rounded: f64 = format!("{mantissa:.decimals$}").parse().unwrap_or(mantissa);
        if rounded.abs() >= 10.0 {
            mantissa /= 10.0;
            exponent += 1;
        }
        format!(
            "{}e{exponent}",
            trim_zeros(format!("{mantissa:.decimals$}"))
        )
    };
    let text = scientific(1);
    if text.chars().count() <= MAX_TICK_LABEL {
        text
    } else {
        scientific(0)
    }
}

/// `units` × 10^`exponent` written exactly, from the digits of the whole number: plain
/// (`0.0125`, `12000`) for magnitudes from 0.001 to 99 999, `1.25e-5` beyond; no trailing
/// zeros after a point.
fn exact_label(units: i64, exponent: i32) -> String {
    if units == 0 {
        return "0".into();
    }
    let sign = if units < 0 { "-" } else { "" };
    let mut digits = units.unsigned_abs().to_string();
    let mut exponent = exponent;
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
        exponent += 1;
    }
    // The decimal exponent of the leading digit.
    let leading = digits.len() as i32 - 1 + exponent;
    let body = if PLAIN_EXPONENTS.contains(&leading) {
        if exponent >= 0 {
            format!("{digits}{}", "0".repeat(exponent as usize))
        } else {
            let point = digits.len() as i32 + exponent;
            if point > 0 {
                let (whole, fraction) = digits.split_at(point as usize);
                format!("{whole}.{fraction}")
            } else {
                format!("0.{}{digits}", "0".repeat((-point) as usize))
            }
        }
    } else {
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{leading}")
        } else {
            format!("{first}.{rest}e{leading}")
        }
    };
    format!("{sign}{body}")
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
    // Labels counted from an offset are read with the title's note.
    let title = |label: &str, ticks: &TickFormat| match ticks.axis_note() {
        Some(note) => format!("{label} ({note})"),
        None => label.to_string(),
    };
    chart
        .configure_mesh()
        .x_labels(TICKS)
        .y_labels(TICKS)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(title(&plot.x_label, &x_ticks))
        .y_desc(title(&plot.y_label, &y_ticks))
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

    /// The ticks plotters labels on a linear or log axis over `range`, with their labels:
    /// every label at most [`MAX_TICK_LABEL`] characters, neighbours different, and each
    /// label, read back as a number (times the unit, plus the offset the axis title names),
    /// the value of its tick.
    fn check_ticks(range: &Range<f64>, log: bool) -> (TickFormat, Vec<String>) {
        let format = TickFormat::of(range, log);
        let ticks = format.ticks();
        // Enough ticks to read the axis by, all on it, in order.
        assert!(ticks.len() >= 2, "{range:?}: ticks {ticks:?}");
        assert!(ticks.len() <= TICKS, "{range:?}: ticks {ticks:?}");
        assert!(
            ticks.iter().all(|t| range.contains(t)),
            "{range:?}: {ticks:?}"
        );
        assert!(
            ticks.windows(2).all(|w| w[0] < w[1]),
            "{range:?}: {ticks:?}"
        );
        let labels: Vec<String> = ticks.iter().map(|&t| format.label(t)).collect();
        for (t, l) in ticks.iter().zip(&labels) {
            assert!(
                !l.is_empty() && l.chars().count() <= MAX_TICK_LABEL,
                "{range:?}: {l:?} (tick {t:e}) is too long"
            );
            let read: f64 = l.parse().unwrap_or_else(|_| panic!("{l:?} is a number"));
            let (value, unit) = match (format.step, format.offset) {
                (Some((_, e)), Some(offset)) => {
                    (offset.value() + decimal(1, e) * read, decimal(1, e))
                }
                (Some((_, e)), None) => (read, decimal(1, e)),
                // A log axis: 1 to 9 times a power of ten, written to two digits.
                (None, _) => (read, 0.01 * t.abs()),
            };
            assert!(
                (value - t).abs() <= 0.01 * unit,
                "{range:?}: {l:?} reads {value:e}, the tick is {t:e} ({format:?})"
            );
        }
        for pair in labels.windows(2) {
            assert_ne!(pair[0], pair[1], "{range:?}: {labels:?}");
        }
        (format, labels)
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
            let (format, labels) = check_ticks(&padded_range([lo, hi].into_iter(), false), false);
            assert_eq!(format.offset, None, "{lo}..{hi}: {labels:?}");
            for l in &labels {
                assert!(!l.contains("000000"), "{lo}..{hi}: {l:?}");
            }
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
        // Too narrow for its magnitude to write exactly in 8 characters: whole units of 1e-6
        // from 12, which the axis title gives.
        let f = TickFormat::of(&(-12.000_01..-11.999_995), false);
        assert_eq!(f.axis_note().as_deref(), Some("tick × 1e-6 − 12"));
        assert_eq!(f.label(-12.000_004), "-4");
        assert_eq!(f.label(-11.999_996), "4");
        // Written exactly where that fits, with every digit the spacing needs.
        let f = TickFormat::of(&(-1.2e-10..1.0e-10), false);
        assert_eq!(f.axis_note(), None);
        assert_eq!(f.label(-1.1e-10), "-1.1e-10");
        let f = TickFormat::of(&(12.0..12.001), false);
        assert_eq!(f.label(12.0004), "12.0004");
    }

    #[test]
    fn tick_labels_of_any_range_are_short_distinct_and_exact() {
        // Ranges of every magnitude from 1e-300 to 1e300, of either sign or about zero, from
        // spans as wide as ten times their magnitude down to below its rounding error (which
        // the padding widens), as a run's data could give them.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2024);
        let mut offsets = 0;
        for case in 0..20_000 {
            let magnitude = 10f64.powf(rng.random_range(-300.0..300.0));
            let relative = 10f64.powf(rng.random_range(-17.0..1.0));
            let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            let data = match case % 4 {
                0 => vec![sign * magnitude, sign * magnitude * (1.0 + relative)],
                1 => vec![sign * magnitude * (1.0 - relative), sign * magnitude],
                2 => vec![
                    -magnitude * rng.random::<f64>(),
                    magnitude * rng.random::<f64>(),
                ],
                _ => vec![sign * magnitude],
            };
            let range = padded_range(data.iter().copied(), false);
            let (format, _) = check_ticks(&range, false);
            offsets += usize::from(format.offset.is_some());
            let positive: Vec<f64> = data.iter().map(|v| v.abs()).collect();
            check_ticks(&padded_range(positive.into_iter(), true), true);
        }
        // Narrow ranges far from zero are common among them.
        assert!(offsets > 2_000, "{offsets} axes counted from an offset");
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
        // Values a rounding error apart: a decade about them, as about one value.
        let r = padded_range([2.0, 2.0 * (1.0 + 1e-13)].into_iter(), true);
        assert!((r.end / r.start - 10.0).abs() < 1e-9, "{r:?}");
    }
}
