//! Numbers in messages: short, whatever their magnitude.

/// A point or vector in messages: its three coordinates, each [`short`]: `(0.057, 0, 0.1)`.
#[must_use]
pub fn point(v: (f64, f64, f64)) -> String {
    format!("({}, {}, {})", short(v.0), short(v.1), short(v.2))
}

/// `x` with up to 6 significant digits, in exponent notation outside [1e-4, 1e6):
/// `1e-320` stays `1e-320`, not three hundred zeros.
#[must_use]
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs();
    if (1e-4..1e6).contains(&magnitude) {
        // Six significant digits: the first is at 10^exponent.
        let exponent = magnitude.log10().floor() as i32;
        let decimals = (5 - exponent).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    } else {
        let text = format!("{x:.5e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim(mantissa)),
            None => text,
        }
    }
}

/// `x` to `digits` significant digits in plain decimals (`103`, `0.0412`), for labels;
/// [`short`] outside [1e-4, 1e6).
#[must_use]
pub fn significant(x: f64, digits: i32) -> String {
    let magnitude = x.abs();
    if x == 0.0 || !(1e-4..1e6).contains(&magnitude) {
        return short(x);
    }
    let decimals = (digits - 1 - magnitude.log10().floor() as i32).max(0) as usize;
    format!("{x:.decimals$}")
}

/// `value ± error` with the error to two significant digits and the value to the same
/// decimal place (`1.4414 ± 0.0020`, `3.27 ± 0.15`), the way a measurement is quoted; the
/// value alone, [`short`], when the error is not a positive finite number.
#[must_use]
pub fn plus_minus(value: f64, error: f64) -> String {
    if !error.is_finite() || error <= 0.0 || !value.is_finite() {
        return short(value);
    }
    let decimals = 1 - error.log10().floor() as i32;
    if !(0..=12).contains(&decimals) {
        return format!("{} ± {}", short(value), short(error));
    }
    let d = decimals as usize;
    format!("{value:.d$} ± {error:.d$}")
}

fn trim(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plus_minus_quotes_the_error_to_two_digits() {
        assert_eq!(plus_minus(1.441_426_73, 0.001_972_42), "1.4414 ± 0.0020");
        assert_eq!(plus_minus(3.272_704_7, 0.148_99), "3.27 ± 0.15");
        assert_eq!(plus_minus(-0.5, 0.25), "-0.50 ± 0.25");
        assert_eq!(plus_minus(2.0, f64::NAN), "2");
        assert_eq!(plus_minus(1234.5, 56.0), "1234 ± 56");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(102.976_715, 3), "103");
        assert_eq!(significant(933.677, 3), "934");
        assert_eq!(significant(0.041_23, 3), "0.0412");
        assert_eq!(significant(0.985_699, 3), "0.986");
    }

    #[test]
    fn short_at_every_magnitude() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1e-300), "1e-300");
        // Subnormal: fewer digits are exact, but the text stays short.
        assert!(short(1e-320).len() <= 12, "{}", short(1e-320));
        assert_eq!(short(1e308), "1e308");
        assert_eq!(short(2650.0), "2650");
        assert_eq!(short(0.1 + 0.2), "0.3");
        assert_eq!(short(-1.0 / 3.0), "-0.333333");
        assert_eq!(short(123_456.7), "123457");
        assert_eq!(short(2.5e-5), "2.5e-5");
        assert_eq!(short(1.234_567_8e-4), "0.000123457");
        assert_eq!(short(f64::INFINITY), "inf");
        assert_eq!(short(f64::NAN), "NaN");
    }
}
