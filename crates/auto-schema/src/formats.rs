//! The six formats the runtime checks, exactly as the reasoning page defines them: date,
//! date-time and time as RFC 3339 full-date, date-time and full-time (a time needs its
//! offset); email as the HTML standard's valid email address; uri as an absolute URI with a
//! scheme, ASCII in RFC 3986's characters, no white space, each `%` with two hex digits; uuid
//! in RFC 4122's form.

/// The formats a schema may name, in the page's order.
pub const FORMATS: &[&str] = &["date", "date-time", "time", "email", "uri", "uuid"];

/// The page's example of each format.
pub fn format_example(format: &str) -> Option<&'static str> {
    Some(match format {
        "date" => "2026-04-01",
        "date-time" => "2026-04-01T09:30:00Z",
        "time" => "09:30:00Z",
        "email" => "name@example.com",
        "uri" => "https://example.com",
        "uuid" => "0f8fad5b-d9cb-469f-a165-70867728950e",
        _ => return None,
    })
}

/// The words for a value of the format, as an input refusal names it.
pub(crate) fn format_noun(format: &str) -> &'static str {
    match format {
        "date" => "a date",
        "date-time" => "a date and time",
        "time" => "a time with its offset",
        "email" => "an email address",
        "uri" => "an absolute URI",
        "uuid" => "a UUID",
        _ => "a value",
    }
}

/// Whether `text` is a value of `format`; an unknown format accepts everything (the save-time
/// check refuses unknown formats, so none reaches validation).
pub fn is_valid_format(format: &str, text: &str) -> bool {
    match format {
        "date" => is_date(text),
        "date-time" => is_date_time(text),
        "time" => is_time(text),
        "email" => is_email(text),
        "uri" => is_uri(text),
        "uuid" => is_uuid(text),
        _ => true,
    }
}

fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// RFC 3339 full-date: `YYYY-MM-DD`, the day within its month (29 February in leap years).
pub(crate) fn is_date(text: &str) -> bool {
    date_parts(text).is_some()
}

/// (year, month, day) of a full-date.
pub(crate) fn date_parts(text: &str) -> Option<(u32, u32, u32)> {
    // Invariant for the slicing below: every index is a character boundary in ASCII text.
    if !text.is_ascii() {
        return None;
    }
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let (year, month, day) = (
        digits(&text[..4])?,
        digits(&text[5..7])?,
        digits(&text[8..])?,
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&day).then_some((year, month, day))
}

/// RFC 3339 full-time: `HH:MM:SS`, an optional fraction, then `Z` or `±HH:MM`.
pub(crate) fn is_time(text: &str) -> bool {
    time_seconds(text).is_some()
}

/// Seconds of the day in UTC (may fall outside 0..86400 after the offset), and the fraction's
/// digits, of a full-time.
pub(crate) fn time_seconds(text: &str) -> Option<(i64, String)> {
    // Invariant for the slicing below: every index is a character boundary in ASCII text.
    if !text.is_ascii() {
        return None;
    }
    let (partial, offset_seconds) = split_offset(text)?;
    let bytes = partial.as_bytes();
    if bytes.len() < 8 || bytes[2] != b':' || bytes[5] != b':' {
        return None;
    }
    let (hour, minute, second) = (
        digits(&partial[..2])?,
        digits(&partial[3..5])?,
        digits(&partial[6..8])?,
    );
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let fraction = &partial[8..];
    let fraction = match fraction.strip_prefix('.') {
        Some(rest) if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) => rest,
        None if fraction.is_empty() => "",
        _ => return None,
    };
    let seconds = i64::from(hour * 3600 + minute * 60 + second) - offset_seconds;
    Some((seconds, fraction.trim_end_matches('0').to_owned()))
}

/// The time before its offset, and the offset in seconds east of UTC.
fn split_offset(text: &str) -> Option<(&str, i64)> {
    if let Some(partial) = text.strip_suffix(['Z', 'z']) {
        return Some((partial, 0));
    }
    let split = text.len().checked_sub(6)?;
    let (partial, offset) = (text.get(..split)?, text.get(split..)?);
    let sign = match offset.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    if offset.as_bytes()[3] != b':' {
        return None;
    }
    let (hours, minutes) = (digits(&offset[1..3])?, digits(&offset[4..])?);
    if hours > 23 || minutes > 59 {
        return None;
    }
    Some((partial, sign * i64::from(hours * 3600 + minutes * 60)))
}

/// RFC 3339 date-time: full-date `T` full-time (`t` too, as RFC 3339 allows).
pub(crate) fn is_date_time(text: &str) -> bool {
    date_time_instant(text).is_some()
}

/// The instant a date-time names, as (seconds since 0000-03-01 UTC, fraction digits), so two
/// date-times compare in time whatever their offsets.
pub(crate) fn date_time_instant(text: &str) -> Option<(i64, String)> {
    let (date, time) = (text.get(..10)?, text.get(11..)?);
    if !matches!(text.as_bytes().get(10), Some(b'T' | b't')) {
        return None;
    }
    let (year, month, day) = date_parts(date)?;
    let (seconds, fraction) = time_seconds(time)?;
    Some((
        days_from_civil(year, month, day) * 86_400 + seconds,
        fraction,
    ))
}

/// Days since 0000-03-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era
}

/// The HTML standard's valid email address:
/// `1*( atext / "." ) "@" label *( "." label )`, each label 1 to 63 letters, digits and
/// hyphens, neither starting nor ending with a hyphen.
pub(crate) fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&b));
    local_ok && domain.split('.').all(is_label)
}

fn is_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// An absolute URI with a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`), then
/// only the characters RFC 3986 allows, in ASCII, no white space, each `%` followed by two
/// hexadecimal digits.
pub(crate) fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    scheme_ok && uri_rest_ok(rest.as_bytes())
}

fn uri_rest_ok(bytes: &[u8]) -> bool {
    const ALLOWED: &[u8] = b"-._~:/?#[]@!$&'()*+,;=";
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        if !(b.is_ascii_alphanumeric() || ALLOWED.contains(&b)) {
            return false;
        }
        i += 1;
    }
    true
}

/// RFC 4122's form: 8-4-4-4-12 hexadecimal digits, either case.
pub(crate) fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(format: &str, good: &[&str], bad: &[&str]) {
        for text in good {
            assert!(
                is_valid_format(format, text),
                "{format} should accept {text:?}"
            );
        }
        for text in bad {
            assert!(
                !is_valid_format(format, text),
                "{format} should refuse {text:?}"
            );
        }
    }

    #[test]
    fn the_pages_examples_pass() {
        for format in FORMATS {
            let example = format_example(format).expect("every format has an example");
            assert!(is_valid_format(format, example), "{format}");
        }
    }

    #[test]
    fn dates() {
        check(
            "date",
            &[
                "2026-04-01",
                "2024-02-29",
                "2000-02-29",
                "0000-01-01",
                "9999-12-31",
            ],
            &[
                "2026-4-01",
                "2026-02-29",
                "1900-02-29",
                "2026-13-01",
                "2026-04-31",
                "2026-04-00",
                "2026-04-01T00:00:00Z",
                "２０２６-04-01",
                " 2026-04-01",
                "20260401",
                "",
            ],
        );
    }

    #[test]
    fn times_need_their_offset() {
        check(
            "time",
            &[
                "09:30:00Z",
                "09:30:00z",
                "23:59:60Z",
                "09:30:00.123+02:00",
                "00:00:00-23:59",
            ],
            &[
                "09:30:00",
                "9:30:00Z",
                "24:00:00Z",
                "09:60:00Z",
                "09:30Z",
                "09:30:00.Z",
                "09:30:00+2:00",
                "09:30:00+24:00",
                "09:30:00+0200",
                "09:30:00 Z",
                "",
            ],
        );
    }

    #[test]
    fn date_times() {
        check(
            "date-time",
            &[
                "2026-04-01T09:30:00Z",
                "2026-04-01t09:30:00.5-05:00",
                "2026-04-01T09:30:00+01:00",
            ],
            &[
                "2026-04-01 09:30:00Z",
                "2026-04-01T09:30:00",
                "2026-04-01",
                "2026-02-30T00:00:00Z",
            ],
        );
        let a = date_time_instant("2026-04-01T09:30:00+01:00").map(|i| i.0);
        let b = date_time_instant("2026-04-01T08:30:00Z").map(|i| i.0);
        assert_eq!(a, b);
        let c = date_time_instant("2026-03-01T00:00:00Z").map(|i| i.0);
        let d = date_time_instant("2026-02-28T23:59:59Z").map(|i| i.0);
        assert_eq!(c.zip(d).map(|(c, d)| c - d), Some(1));
    }

    #[test]
    fn emails_as_the_html_standard_defines_them() {
        check(
            "email",
            &[
                "name@example.com",
                "a.b+c@x",
                "o'neil@sub-domain.example.org",
                "x@a1.b2",
            ],
            &[
                "name",
                "@example.com",
                "name@",
                "name@-example.com",
                "name@example-.com",
                "name@example..com",
                "na me@example.com",
                "näme@example.com",
                "a@b@c",
                "name@example.com.",
                "",
            ],
        );
        let long_label = format!("a@{}.com", "b".repeat(64));
        assert!(!is_email(&long_label));
        assert!(is_email(&format!("a@{}.com", "b".repeat(63))));
    }

    #[test]
    fn uris_are_absolute_ascii_and_escaped() {
        check(
            "uri",
            &[
                "https://example.com",
                "urn:isbn:0451450523",
                "mailto:name@example.com",
                "https://example.com/a%20b?q=1#top",
                "h2+x-y.z:rest",
                "https:",
            ],
            &[
                "example.com",
                "/path",
                "1http://x",
                "https://exa mple.com",
                "https://example.com/é",
                "https://example.com/%2",
                "https://example.com/%zz",
                "https://example.com/<a>",
                ":nothing",
                "https://example.com/\t",
                "",
            ],
        );
    }

    #[test]
    fn uuids() {
        check(
            "uuid",
            &[
                "0f8fad5b-d9cb-469f-a165-70867728950e",
                "0F8FAD5B-D9CB-469F-A165-70867728950E",
                "00000000-0000-0000-0000-000000000000",
            ],
            &[
                "0f8fad5bd9cb469fa16570867728950e",
                "0f8fad5b-d9cb-469f-a165-70867728950",
                "{0f8fad5b-d9cb-469f-a165-70867728950e}",
                "0f8fad5g-d9cb-469f-a165-70867728950e",
                "",
            ],
        );
    }
}
