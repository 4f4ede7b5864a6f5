//! Prediction functions (supplement §7): Markdown with YAML front matter (description, input
//! schema and defaults, the output shape `series`, and `source`, `horizon`, `period` and
//! `season`) and a body of prose. A *build* fits the candidate models on the series the source
//! gives (`auto-forecast`); a *question* answers a `series` of the history and the periods
//! predicted.
//!
//! What is pure lives here: the document's checks, the run's input read as a build or a
//! question, and the x of each period predicted, stepped from the series' last point by
//! `period`. Gathering the series and keeping the build is the runtime's (`prediction_runs`).

use auto_doc::{Issue, YamlConfig, read_markdown};
use auto_schema::{SchemaRole, shape_schema};
use chrono::{DateTime, Months, NaiveDate, SecondsFormat, TimeDelta};
use serde::Serialize;
use serde_json::{Map, Value, json};

use auto_template::CheckConfig;

use crate::computation::check_output;
use crate::definitions::{Checked, DefinitionChecker, check_name};
use crate::interaction::{check_expires, template_field};
use crate::reasoning::{Fields, check_description, check_input};
use crate::workflow::RUN_DURATION_MS_DEFAULT;

const TOP_KEYS: [&str; 7] = [
    "description",
    "input",
    "output",
    "source",
    "horizon",
    "period",
    "season",
];

/// "horizon: periods predicted, 1 to 1,000".
pub const PREDICTION_HORIZON_MAX: u64 = 1_000;

/// The most points one season may hold: a year of days, a week of hours and more fit.
pub const PREDICTION_SEASON_MAX: u64 = 1_000;

/// The words of a `period` that is not one.
pub const PERIOD_FORM: &str = "Expected an ISO 8601 duration of one unit between two points, such as PT1H, P1D, P1W, P1M, P3M or P1Y.";

/// The time between two points of the series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    /// Calendar months (`P1M`, `P3M`, `P1Y` as 12).
    Months(u32),
    /// Days (`P1D`, `P1W` as 7).
    Days(u32),
    /// Seconds (`PT1H` as 3,600).
    Seconds(u32),
}

/// Reads a `period`: a whole number of one unit, more than none.
pub fn parse_period(text: &str) -> Option<Period> {
    let rest = text.strip_prefix('P')?;
    let (time, rest) = match rest.strip_prefix('T') {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let unit = rest.chars().last()?;
    let digits = &rest[..rest.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok().filter(|n| *n > 0)?;
    match (time, unit) {
        (false, 'Y') => n.checked_mul(12).map(Period::Months),
        (false, 'M') => Some(Period::Months(n)),
        (false, 'W') => n.checked_mul(7).map(Period::Days),
        (false, 'D') => Some(Period::Days(n)),
        (true, 'H') => n.checked_mul(3_600).map(Period::Seconds),
        (true, 'M') => n.checked_mul(60).map(Period::Seconds),
        (true, 'S') => Some(Period::Seconds(n)),
        _ => None,
    }
}

/// Where a prediction's series comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The first line of the answer of the playbook's recall function `name` to `input`.
    Recall { name: String, input: Value },
    /// The first line of a `series` a person uploads through the inbox: a build leaves a
    /// request to `to` (a template of the run's input) that waits `expires_ms`.
    Request {
        to: String,
        /// The source line of `to`, for a problem found when it is rendered.
        to_line: u32,
        expires_ms: u64,
    },
}

/// A prediction function's document after it passed the checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PredictionDocument {
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    pub input_default: Option<Map<String, Value>>,
    /// The `series` shape's schema: a prediction answers that shape.
    pub output_schema: Option<Value>,
    pub source: Source,
    pub horizon: u32,
    pub period: Period,
    /// The period's text, as written.
    pub period_text: String,
    pub season: Option<u32>,
    pub warnings: Vec<String>,
}

/// The checker `create_definition` runs for the type prediction.
#[derive(Clone, Copy, Debug)]
pub struct PredictionChecker {
    /// The longest a run may last (`WORKFLOW_MAX_DURATION`): a request's `expires` may not be
    /// longer.
    pub run_duration_ms: u64,
}

impl Default for PredictionChecker {
    fn default() -> Self {
        Self {
            run_duration_ms: RUN_DURATION_MS_DEFAULT,
        }
    }
}

impl DefinitionChecker for PredictionChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let document = check_prediction(source, self.run_duration_ms)?;
        Ok(Checked {
            description: document.description,
            warnings: document.warnings,
            input_schema: document.input_schema,
            output_schema: document.output_schema,
            ..Checked::default()
        })
    }
}

/// Checks a prediction function's source against a run's longest duration (the most a
/// request for its series may wait); the document, or every problem found.
pub fn check_prediction(
    source: &str,
    run_duration_ms: u64,
) -> Result<PredictionDocument, Vec<Issue>> {
    let read = read_markdown(source, &YamlConfig::front_matter());
    let mut fields = Fields::new(&read.front_matter, &read.issues);
    let mut warnings = Vec::new();
    if !read.complete {
        return Err(fields.issues);
    }
    if !fields.doc.value().is_object() {
        fields.at(
            "",
            "The front matter must be a mapping of the fields description, input, output, source, horizon, period and season.",
        );
        return Err(fields.issues);
    }
    fields.only_keys("", &TOP_KEYS);
    let description = check_description(&mut fields);
    let input = check_input(&mut fields, &mut warnings);
    let (schema, shape) = check_output(&mut fields, &mut warnings, SchemaRole::Answer);
    if schema.is_some() {
        fields.at(
            "/output/schema",
            "A prediction function answers the shape series: leave output out, or write output: {shape: series}.",
        );
    } else if shape.as_deref().is_some_and(|s| s != "series") {
        fields.at(
            "/output/shape",
            "A prediction function answers the shape series.",
        );
    }
    let config = CheckConfig {
        input_fields: input.closed_fields.clone(),
    };
    let source = check_source(&mut fields, &config, run_duration_ms);
    let horizon = required_whole(
        &mut fields,
        "/horizon",
        1,
        PREDICTION_HORIZON_MAX,
        "the number of periods predicted, such as horizon: 12",
    );
    let period_text = match fields.get("/period") {
        None => {
            fields.at(
                "",
                "The field period is missing: the time between two points of the series, such as period: P1M.",
            );
            None
        }
        Some(_) => fields.string("/period"),
    };
    let period = period_text.as_deref().and_then(|text| {
        let period = parse_period(text);
        if period.is_none() {
            fields.at("/period", PERIOD_FORM);
        }
        period
    });
    let season = match fields.get("/season") {
        None => None,
        Some(_) => fields
            .whole(
                "/season",
                2,
                PREDICTION_SEASON_MAX,
                &format!(
                    "Expected a whole number of points in one season, from 2 to {PREDICTION_SEASON_MAX}."
                ),
            )
            .map(|n| n as u32),
    };
    match (
        fields.issues.is_empty(),
        source,
        horizon,
        period,
        period_text,
    ) {
        (true, Some(source), Some(horizon), Some(period), Some(period_text)) => {
            Ok(PredictionDocument {
                description,
                input_schema: input.schema,
                input_default: input.default,
                output_schema: shape_schema("series"),
                source,
                horizon: horizon as u32,
                period,
                period_text,
                season,
                warnings: warnings.iter().map(Issue::message).collect(),
            })
        }
        _ => Err(fields.issues),
    }
}

/// A whole number within `min..=max` that must be there.
fn required_whole(
    fields: &mut Fields<'_>,
    pointer: &str,
    min: u64,
    max: u64,
    what: &str,
) -> Option<u64> {
    let name = &pointer[1..];
    if fields.get(pointer).is_none() {
        fields.at("", format!("The field {name} is missing: {what}."));
        return None;
    }
    fields.whole(
        pointer,
        min,
        max,
        &format!("Expected a whole number from {min} to {max}."),
    )
}

/// `source`: `recall` (with an optional `input`), or `request` (`to` and `expires`).
fn check_source(
    fields: &mut Fields<'_>,
    config: &CheckConfig,
    run_duration_ms: u64,
) -> Option<Source> {
    if fields.get("/source").is_none() {
        fields.at(
            "",
            "The field source is missing: where the series comes from, such as source: {recall: orders-by-month}.",
        );
        return None;
    }
    fields.object("/source")?;
    if fields.get("/source/request").is_some() {
        return check_request(fields, config, run_duration_ms);
    }
    fields.only_keys("/source", &["recall", "input"]);
    if fields.get("/source/recall").is_none() {
        fields.at(
            "/source",
            "Expected recall: the name of a recall function whose answer is a series.",
        );
        return None;
    }
    let name = fields.string("/source/recall")?;
    if let Err(problem) = check_name(&name) {
        fields.at("/source/recall", problem);
        return None;
    }
    let input = match fields.get("/source/input") {
        None => json!({}),
        Some(_) => Value::Object(fields.object("/source/input")?.clone()),
    };
    Some(Source::Recall { name, input })
}

/// `source: {request: {to, expires}}`: who uploads the series and how long the request waits,
/// checked as an interaction's `to` and `expires`.
fn check_request(
    fields: &mut Fields<'_>,
    config: &CheckConfig,
    run_duration_ms: u64,
) -> Option<Source> {
    if fields.get("/source/recall").is_some() {
        fields.at(
            "/source/recall",
            "Not allowed beside request: the series comes from a recall function or from a person, not both.",
        );
    }
    fields.only_keys("/source", &["recall", "request"]);
    fields.object("/source/request")?;
    fields.only_keys("/source/request", &["to", "expires"]);
    let to = match fields.get("/source/request/to") {
        None => {
            fields.at(
                "/source/request",
                "Expected to: who uploads the series, as a template such as '{{ input.owner }}'.",
            );
            None
        }
        Some(_) => template_field(fields, "/source/request/to", config),
    };
    let expires_ms = check_expires(fields, "/source/request/expires", run_duration_ms);
    Some(Source::Request {
        to: to?,
        to_line: fields.doc.value_position("/source/request/to").line,
        expires_ms: expires_ms?,
    })
}

/// What a run of a prediction asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// `{"build": true}`: fit the candidates and keep the pick.
    Build,
    /// `{"periods": N}` (or `{}`, the horizon): the series predicted.
    Question { periods: u32 },
}

/// Reads a run's input: `{"build": true}`, `{"periods": N}` with N from 1 to the horizon, or
/// `{}` for the horizon; anything else is refused with the issue at its pointer.
pub fn read_ask(input: &Value, horizon: u32) -> Result<Ask, (String, String)> {
    let Some(object) = input.as_object() else {
        return Err(("".into(), "Expected an object.".into()));
    };
    match (object.get("build"), object.get("periods")) {
        (Some(_), Some(_)) => Err((
            "/periods".into(),
            "Not allowed beside build: a run builds or asks, not both.".into(),
        )),
        (Some(Value::Bool(true)), None) => Ok(Ask::Build),
        (Some(_), None) => Err((
            "/build".into(),
            "Expected true: {\"build\": true} fits the models again.".into(),
        )),
        (None, Some(periods)) => match periods.as_u64() {
            Some(n) if (1..=u64::from(horizon)).contains(&n) => {
                Ok(Ask::Question { periods: n as u32 })
            }
            _ => Err((
                "/periods".into(),
                format!("Expected a whole number of periods from 1 to the horizon, {horizon}."),
            )),
        },
        (None, None) => Ok(Ask::Question { periods: horizon }),
    }
}

/// The x of the `count` periods after the series' last point, stepped by `period` from it: a
/// date (`2026-03-01`) or a date-time (RFC 3339) by the calendar, a number by the step between
/// the last two points (1 with one point).
pub fn next_xs(xs: &[Value], period: Period, count: usize) -> Result<Vec<Value>, String> {
    let Some(last) = xs.last() else {
        return Err("The series has no point.".into());
    };
    match last {
        Value::Number(n) => {
            let last = n.as_f64().unwrap_or(0.0);
            let step = match xs.len().checked_sub(2).and_then(|i| xs[i].as_f64()) {
                Some(before) => last - before,
                None => 1.0,
            };
            Ok((1..=count)
                .map(|k| {
                    let x = last + step * k as f64;
                    if x.fract() == 0.0 && x.abs() < 9e15 {
                        json!(x as i64)
                    } else {
                        json!(x)
                    }
                })
                .collect())
        }
        Value::String(text) => {
            if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
                (1..=count)
                    .map(|k| {
                        step_date(date, period, k as u32)
                            .map(|d| json!(d.format("%Y-%m-%d").to_string()))
                    })
                    .collect()
            } else if let Ok(time) = DateTime::parse_from_rfc3339(text) {
                (1..=count)
                    .map(|k| {
                        let k = k as u32;
                        let next = match period {
                            Period::Months(n) => n
                                .checked_mul(k)
                                .and_then(|m| time.checked_add_months(Months::new(m))),
                            Period::Days(n) => n
                                .checked_mul(k)
                                .and_then(|d| time.checked_add_signed(TimeDelta::days(d.into()))),
                            Period::Seconds(n) => n.checked_mul(k).and_then(|s| {
                                time.checked_add_signed(TimeDelta::seconds(s.into()))
                            }),
                        };
                        next.map(|t| json!(t.to_rfc3339_opts(SecondsFormat::AutoSi, true)))
                            .ok_or_else(|| "A period predicted falls past the calendar.".into())
                    })
                    .collect()
            } else {
                Err(format!(
                    "The series' last x, {text}, is neither a date (2026-03-01) nor a date-time (RFC 3339)."
                ))
            }
        }
        other => Err(format!(
            "The series' last x, {other}, is not a date or a number."
        )),
    }
}

fn step_date(date: NaiveDate, period: Period, k: u32) -> Result<NaiveDate, String> {
    let next = match period {
        Period::Months(n) => n
            .checked_mul(k)
            .and_then(|m| date.checked_add_months(Months::new(m))),
        Period::Days(n) => n
            .checked_mul(k)
            .and_then(|d| date.checked_add_signed(TimeDelta::days(d.into()))),
        Period::Seconds(_) => {
            return Err(
                "The series' x are dates: a period shorter than a day does not step from one to the next; give date-times."
                    .into(),
            );
        }
    };
    next.ok_or_else(|| "A period predicted falls past the calendar.".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(front: &str) -> String {
        format!(
            "---\ndescription: Orders ahead.\n{front}---\nHow many orders the next months hold.\n"
        )
    }

    const GOOD: &str = "source: {recall: orders-by-month}\nhorizon: 12\nperiod: P1M\n";

    fn messages(source: &str) -> Vec<String> {
        check_prediction(source, RUN_DURATION_MS_DEFAULT)
            .expect_err("refused")
            .iter()
            .map(Issue::message)
            .collect()
    }

    #[test]
    fn a_document_checks_with_its_defaults() {
        let checked = check_prediction(&doc(GOOD), RUN_DURATION_MS_DEFAULT).expect("checks");
        assert_eq!(
            checked.source,
            Source::Recall {
                name: "orders-by-month".into(),
                input: json!({})
            }
        );
        assert_eq!((checked.horizon, checked.season), (12, None));
        assert_eq!(checked.period, Period::Months(1));
        assert_eq!(checked.output_schema, shape_schema("series"));
        let with = doc(
            "source: {recall: orders, input: {region: north}}\nhorizon: 3\nperiod: P1W\nseason: 52\noutput: {shape: series}\n",
        );
        let checked = check_prediction(&with, RUN_DURATION_MS_DEFAULT).expect("checks");
        assert_eq!(checked.season, Some(52));
        assert_eq!(checked.period, Period::Days(7));
    }

    #[test]
    fn horizon_and_season_at_their_edges() {
        for (horizon, ok) in [(1, true), (1_000, true), (0, false), (1_001, false)] {
            let text = doc(&format!(
                "source: {{recall: orders}}\nhorizon: {horizon}\nperiod: P1D\n"
            ));
            assert_eq!(
                check_prediction(&text, RUN_DURATION_MS_DEFAULT).is_ok(),
                ok,
                "{horizon}"
            );
        }
        assert!(
            messages(&doc(
                "source: {recall: orders}\nhorizon: 1001\nperiod: P1D\n"
            ))
            .iter()
            .any(|m| m.contains("Expected a whole number from 1 to 1000."))
        );
        for (season, ok) in [(2, true), (1_000, true), (1, false), (1_001, false)] {
            let text = doc(&format!("{GOOD}season: {season}\n"));
            assert_eq!(
                check_prediction(&text, RUN_DURATION_MS_DEFAULT).is_ok(),
                ok,
                "{season}"
            );
        }
    }

    #[test]
    fn every_problem_is_found() {
        let found = messages(&doc("source: {recall: Orders}\nperiod: P1.5M\nextra: 1\n"));
        assert!(
            found
                .iter()
                .any(|m| m.contains("The field horizon is missing")),
            "{found:?}"
        );
        assert!(found.iter().any(|m| m.contains(PERIOD_FORM)), "{found:?}");
        assert!(
            found.iter().any(|m| m.contains("/source/recall")),
            "{found:?}"
        );
        assert!(found.iter().any(|m| m.contains("/extra")), "{found:?}");
        let found = messages(&doc("horizon: 3\nperiod: P1D\noutput: {shape: table}\n"));
        assert!(
            found
                .iter()
                .any(|m| m.contains("The field source is missing")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.contains("A prediction function answers the shape series.")),
            "{found:?}"
        );
    }

    #[test]
    fn a_request_source_is_checked_as_an_interaction_asks() {
        let request = |source: &str| doc(&format!("source: {source}\nhorizon: 3\nperiod: P1D\n"));
        let checked = check_prediction(
            &request("{request: {to: '{{ input.owner }}', expires: P2D}}"),
            RUN_DURATION_MS_DEFAULT,
        )
        .expect("checks");
        assert_eq!(
            checked.source,
            Source::Request {
                to: "{{ input.owner }}".into(),
                to_line: 3,
                expires_ms: 2 * 86_400_000,
            }
        );
        // At the longest a run may last, accepted; one second past, refused.
        let at = check_prediction(
            &request("{request: {to: ops, expires: P30D}}"),
            30 * 86_400_000,
        );
        assert!(at.is_ok(), "{at:?}");
        assert_eq!(
            messages(&request("{request: {to: ops, expires: P30DT1S}}")),
            vec![
                "Line 3, /source/request/expires: The duration is longer than a run may last: at most 30 days."
            ]
        );
        assert_eq!(
            messages(&request("{request: {expires: P2D, cc: ops}}")),
            vec![
                "Line 3, /source/request/cc: Unknown key: the keys here are to and expires.",
                "Line 3, /source/request: Expected to: who uploads the series, as a template such as '{{ input.owner }}'."
            ]
        );
        assert_eq!(
            messages(&request("{request: {to: ops}}")),
            vec![
                "Line 3, /source/request/expires: Required with to: how long the request waits for an answer, such as P2D."
            ]
        );
        let found = messages(&request(
            "{recall: orders, request: {to: '{{ input.', expires: P1M}}",
        ));
        assert!(
            found
                .iter()
                .any(|m| m.contains("/source/recall: Not allowed beside request")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|m| m.contains("/source/request/to:")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.contains("/source/request/expires: Years and months")),
            "{found:?}"
        );
    }

    #[test]
    fn periods_of_one_unit() {
        assert_eq!(parse_period("PT1H"), Some(Period::Seconds(3_600)));
        assert_eq!(parse_period("PT15M"), Some(Period::Seconds(900)));
        assert_eq!(parse_period("P3M"), Some(Period::Months(3)));
        assert_eq!(parse_period("P1Y"), Some(Period::Months(12)));
        for bad in [
            "P", "PT", "P0D", "P1DT1H", "1D", "P-1D", "PT1D", "P1H", "P1.5D",
        ] {
            assert_eq!(parse_period(bad), None, "{bad}");
        }
    }

    #[test]
    fn asks_are_read_to_the_horizon() {
        assert_eq!(read_ask(&json!({"build": true}), 12), Ok(Ask::Build));
        assert_eq!(read_ask(&json!({}), 12), Ok(Ask::Question { periods: 12 }));
        assert_eq!(
            read_ask(&json!({"periods": 12}), 12),
            Ok(Ask::Question { periods: 12 })
        );
        assert_eq!(
            read_ask(&json!({"periods": 13}), 12).unwrap_err().0,
            "/periods"
        );
        assert_eq!(
            read_ask(&json!({"periods": 0}), 12).unwrap_err().0,
            "/periods"
        );
        assert_eq!(
            read_ask(&json!({"build": false}), 12).unwrap_err().0,
            "/build"
        );
    }

    #[test]
    fn the_periods_predicted_step_by_the_calendar() {
        let months = [json!("2026-01-31")];
        assert_eq!(
            next_xs(&months, Period::Months(1), 2).unwrap(),
            [json!("2026-02-28"), json!("2026-03-31")]
        );
        let hours = [json!("2026-03-01T22:00:00Z")];
        assert_eq!(
            next_xs(&hours, Period::Seconds(3_600), 2).unwrap(),
            [json!("2026-03-01T23:00:00Z"), json!("2026-03-02T00:00:00Z")]
        );
        assert_eq!(
            next_xs(&[json!(1990), json!(1995)], Period::Months(60), 2).unwrap(),
            [json!(2000), json!(2005)]
        );
        assert!(next_xs(&[json!("2026-03-01")], Period::Seconds(60), 1).is_err());
        assert!(next_xs(&[json!("March")], Period::Days(1), 1).is_err());
    }
}
