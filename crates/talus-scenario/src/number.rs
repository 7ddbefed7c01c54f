//! Numbers in messages: short, whatever their magnitude.

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
