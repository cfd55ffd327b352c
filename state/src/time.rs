//! Wall-clock time as amplihack writes it, without a date-time dependency.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub fn now_unix() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// `YYYY-MM-DDTHH:MM:SSZ` for now.
pub fn utc_now() -> String {
    utc(now_unix().as_secs() as i64)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for now.
pub fn utc_now_millis() -> String {
    let now = now_unix();
    let base = utc(now.as_secs() as i64);
    format!("{}.{:03}Z", &base[..base.len() - 1], now.subsec_millis())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch (civil-from-days, H. Hinnant).
pub fn utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Seconds since the epoch of a `YYYY-MM-DDTHH:MM:SS` time (any suffix after the seconds, such
/// as `Z`, `.123Z` or `+00:00`, is ignored: amplihack and its predecessors write UTC).
pub fn parse_utc(text: &str) -> Option<i64> {
    let text = text.trim();
    let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // days-from-civil (H. Hinnant)
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for secs in [0, 951_782_400, 1_763_819_420, 4_102_444_799] {
            assert_eq!(parse_utc(&utc(secs)), Some(secs), "{}", utc(secs));
        }
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            parse_utc("2026-11-23T01:02:03.456+00:00"),
            Some(parse_utc("2026-11-23T01:02:03Z").unwrap_or(0))
        );
        assert_eq!(parse_utc("yesterday"), None);
    }
}
