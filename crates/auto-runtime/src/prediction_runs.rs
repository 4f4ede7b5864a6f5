//! Prediction functions' builds and questions (supplement §7, "prediction").
//!
//! A *build* (input `{"build": true}`) gathers the series from its source (the first line of a
//! recall function's answer), fits the candidate models (`auto-forecast`) on a holdout of the
//! last `horizon` points, picks the best by MASE and refits it on the whole series. What it
//! found is the run's output and its fact `prediction_built`, recorded with the ending in one
//! commit; the fitted model, with the series, is kept in the store beside the recall views,
//! under the name `prediction/<name>` (no function's name holds a `/`), one row per prediction,
//! replaced by each build. A build is deterministic: a server stopped during one leaves either
//! the last build's row or this one's whole, and the run, taken up again under its id, builds
//! the same model again.
//!
//! A *question* (`{"periods": N}`, or `{}` for the horizon) answers the `series` shape: the
//! history, the periods predicted, and the 95% interval where the model gives one, from the
//! latest build of the run's version; a question before any build of that version builds
//! first, in its own run, and records the build's fact too.
//!
//! A series a person uploads (`source: {request: {to, expires}}`) makes a build wait as an
//! interaction's run does: the run leaves a request in the inbox, recorded with its start in
//! one transaction, and stays `started`, holding nothing in memory. The answer, a `series`,
//! is fitted before it is taken: one too short or not finite is refused and the request stays
//! open. The build is kept, then the request closes and the run ends with the build's fact in
//! one transaction; a server stopped in between leaves the request open and a build kept that
//! the same answer, given again, keeps again bit for bit. Past `expires` the run ends
//! `unanswered`, and a cancel closes the request, as an interaction's.

use std::sync::Arc;

use auto_engine::interaction::render_to;
use auto_engine::prediction::{self, Ask, Period, PredictionDocument, Source};
use auto_forecast::Step;
use auto_store::{
    DefinitionKey, DefinitionVersion, NewRun, PlaybookRef, RecallView, Request, RequestStatus, Run,
    RunStatus,
};
use serde_json::{Value, json};

use crate::api::AnswerInteraction;
use crate::auth::Caller;
use crate::documents::Checked;
use crate::interaction_runs::{Closing, Prepared, answer_refused, render_clocked};
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::runner::{Finish, Function, Runner, within_call};
use crate::runs::{self, Outcome, answer_of, prepared_input, rejection, succeeded};
use crate::service::{Service, store_problem};

/// A prediction run answers within its call: the recall run it reads (its bound) and a build
/// of up to [`auto_forecast::SERIES_POINTS_MAX`] points.
pub const PREDICTION_RUN_BOUND_MS: i64 = crate::recall_runs::RECALL_RUN_BOUND_MS + 60_000;

/// The name a prediction's build is kept under among the views.
fn kept_name(name: &str) -> String {
    format!("prediction/{name}")
}

/// A build as kept: the series it was fitted on and the fitted model.
struct Kept {
    xs: Vec<Value>,
    ys: Vec<f64>,
    build: auto_forecast::Build,
}

/// The runner of prediction functions: a build or a question performed within its call
/// ([`Prediction`]), or a build that waits for a person's series.
pub(crate) struct Predictions;

impl Runner for Predictions {
    async fn begin(
        &self,
        service: &Service,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: runs::Ask,
        definition: &DefinitionVersion,
    ) -> Outcome {
        let checked = service.checked(pb, key, definition.version, &definition.source);
        if let Some(document) = checked.as_deref().and_then(Checked::prediction)
            && let Some(input) =
                waits_for_person(service, pb, key, definition.version, document, &ask.input).await?
        {
            return ask_for_series(
                service,
                caller,
                pb,
                key,
                (ask, input),
                definition.version,
                document,
            )
            .await;
        }
        Prediction
            .begin(service, caller, pb, key, ask, definition)
            .await
    }

    async fn again(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        run: Run,
    ) -> Outcome {
        // A build that asked a person was asked once, as an interaction's request is: the run
        // under its id is answered as it stands.
        if request_of(service, pb, &run).await?.is_some() {
            return Ok(answer_of(&run));
        }
        Prediction.again(service, pb, key, run).await
    }

    async fn cancel(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        if run.status == RunStatus::Started && request_of(service, pb, run).await?.is_some() {
            return service
                .cancel_interaction(pb, run, words, kind.unwrap_or("requested"))
                .await
                .map_err(|mut problem| {
                    problem.run_id = Some(run.run_id.clone());
                    problem
                });
        }
        Prediction.cancel(service, pb, run, words, kind).await
    }
}

/// The request a run of a prediction left for its series, if it left one.
async fn request_of(
    service: &Service,
    pb: &PlaybookRef,
    run: &Run,
) -> Result<Option<Request>, Problem> {
    service
        .store
        .get_request_of_run(pb, &run.run_id)
        .await
        .map_err(store_problem)
}

/// The title of a prediction's refusal of its input.
fn refused_input(name: &str) -> String {
    format!("The prediction function {name} refused its input")
}

/// A run's input checked against the document's input schema, its defaults filled in.
fn prediction_input(
    document: &PredictionDocument,
    name: &str,
    input: &Value,
) -> Result<Value, Problem> {
    prepared_input(
        input,
        document.input_schema.as_ref(),
        document.input_default.as_ref(),
        &refused_input(name),
    )
}

/// The prepared input of a new run of `document` that asks a person for the series: its
/// source is a request, its input is well formed, and it builds (a build, or a question before
/// any build of its version). `None` otherwise: a run whose input is refused goes the way of
/// every other, refused within its call.
async fn waits_for_person(
    service: &Service,
    pb: &PlaybookRef,
    key: &DefinitionKey,
    version: i64,
    document: &PredictionDocument,
    input: &Value,
) -> Result<Option<Value>, Problem> {
    if !matches!(document.source, Source::Request { .. }) {
        return Ok(None);
    }
    let Ok(input) = prediction_input(document, &key.name, input) else {
        return Ok(None);
    };
    let asks = match prediction::read_ask(&input, document.horizon) {
        Ok(Ask::Build) => true,
        Ok(Ask::Question { .. }) => kept_build(service, pb, &key.name, version).await?.is_none(),
        Err(_) => false,
    };
    Ok(asks.then_some(input))
}

/// Starts a build that asks `to` for the series (rendered with the run's prepared input): the
/// request recorded with the run's start, or the run ended at once when `to` cannot render.
async fn ask_for_series(
    service: &Service,
    caller: &Caller,
    pb: &PlaybookRef,
    key: &DefinitionKey,
    (ask, input): (runs::Ask, Value),
    version: i64,
    document: &PredictionDocument,
) -> Outcome {
    let Source::Request {
        to,
        to_line,
        expires_ms,
    } = &document.source
    else {
        return Err(Problem::internal(
            &"a prediction asked a person without a request",
        ));
    };
    let (template, line) = (to.clone(), *to_line);
    let rendered = render_clocked(move |clock| render_to(&template, line, &input, clock)).await?;
    match rendered {
        Ok(to) => {
            let prepared = Prepared {
                to,
                message: request_message(&key.name, document),
                expires_ms: *expires_ms,
                webhook: None,
            };
            let schema = document.output_schema.clone();
            service
                .ask_person(caller, pb, key, ask, version, schema, prepared)
                .await
        }
        Err(error) => {
            let message = format!("Line {}: {}", error.line, error.text);
            let issue = ProblemIssue {
                pointer: error.field_pointer.unwrap_or_else(|| "/input".into()),
                line: Some(error.line),
                column: None,
                path: Some("/source/request/to".into()),
                message: message.clone(),
            };
            let problem = Problem::invalid_input(
                format!(
                    "The prediction function {} cannot render its request",
                    key.name
                ),
                message,
            )
            .with_issues(vec![issue]);
            service
                .start_and_end(caller, pb, key, version, ask, problem)
                .await
        }
    }
}

/// What the person asked for the series reads: what it is for, its form and how many points.
fn request_message(name: &str, document: &PredictionDocument) -> String {
    let training =
        auto_forecast::TRAINING_POINTS_MIN.max(document.season.map_or(0, |m| m as usize + 1));
    let needed = document.horizon as usize + training;
    let mut message = String::new();
    if let Some(description) = &document.description {
        message.push_str(description);
        message.push_str("\n\n");
    }
    message.push_str(&format!(
        "Upload the series the prediction function **{name}** is built on, as the answer: a `series` whose first line holds its points, oldest first, one every {period} (`{{\"x\": \"2026-01-01\", \"y\": 42}}`). Its last {horizon} points are held out to choose the model, so it needs at least {needed} points; a few seasons of history choose better.\n",
        period = document.period_text,
        horizon = document.horizon,
    ));
    message
}

impl Service {
    /// `answer_interaction` on the request of a prediction's build: the series uploaded is
    /// fitted and kept, then the request closes and the run ends with the build's outcome (a
    /// build) or the periods predicted (a question), the build's fact before the ending. A
    /// series that cannot be built on is refused, and the request stays open.
    pub(crate) async fn answer_with_series(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        request: &Request,
        body: AnswerInteraction,
    ) -> Result<Request, Problem> {
        let run = self
            .store
            .get_run(pb, &request.run_id)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| Problem::internal(&"a request's run is missing"))?;
        let checked = self
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        let Some(document) = checked.as_deref().and_then(Checked::prediction) else {
            return Err(crate::documents::no_longer_parses(&run.key));
        };
        let refuse = |message: String| {
            answer_refused(
                &request.request_id,
                vec![ProblemIssue::field("/answer/lines/0/points", message)],
            )
        };
        let (xs, ys) = match points_of(&body.answer) {
            Ok(points) => points,
            Err(None) => {
                return Err(refuse(
                    "answer: the series has no line; its first line's points are the series".into(),
                ));
            }
            Err(Some(point)) => {
                return Err(refuse(format!(
                    "A point of the series has no number y: {point}."
                )));
            }
        };
        let kept = fit(document, xs, ys).await?.map_err(refuse)?;
        keep(self, pb, &run.key.name, run.definition_version, &kept).await?;
        let outcome = outcome_of(&kept);
        // The input was read when the run started; a question answers its periods.
        let ask = prediction_input(document, &run.key.name, &run.input)
            .ok()
            .and_then(|input| prediction::read_ask(&input, document.horizon).ok())
            .unwrap_or(Ask::Build);
        let output = match ask {
            Ask::Build => Ok(outcome.clone()),
            Ask::Question { periods } => answer(document, &kept, periods),
        };
        let answered_by = caller.id.clone();
        let record = json!({ "request_id": request.request_id, "answered_by": answered_by });
        self.close(pb, request, RequestStatus::Answered, |run| {
            let ending = match &output {
                Ok(output) => succeeded(run, output.clone(), Some(record.clone())),
                Err(problem) => rejection(problem.clone(), &run.run_id),
            };
            Closing {
                ending,
                data: record.clone(),
                answer: Some(body.answer.clone()),
                answered_by: Some(answered_by.clone()),
                facts: vec![("prediction_built", outcome.clone())],
            }
        })
        .await
    }
}

/// The runner of prediction functions that finish within their call.
pub(crate) struct Prediction;

impl Function for Prediction {
    async fn perform(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        _: Option<NewRun>,
    ) -> Result<Finish, Problem> {
        let checked = service
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        let Some(document) = checked.as_deref().and_then(Checked::prediction) else {
            let ending = rejection(crate::documents::no_longer_parses(&run.key), &run.run_id);
            return Ok(Finish::at(ending, run.last_run_seq + 1));
        };
        let name = &run.key.name;
        let input = match prediction_input(document, name, &run.input) {
            Ok(input) => input,
            Err(problem) => {
                return Ok(Finish::at(
                    rejection(problem, &run.run_id),
                    run.last_run_seq + 1,
                ));
            }
        };
        let ask = match prediction::read_ask(&input, document.horizon) {
            Ok(ask) => ask,
            Err((pointer, message)) => {
                let problem =
                    Problem::invalid_input(refused_input(name), format!("{pointer}: {message}"))
                        .with_issues(vec![ProblemIssue::field(
                            format!("/input{pointer}"),
                            message,
                        )]);
                return Ok(Finish::at(
                    rejection(problem, &run.run_id),
                    run.last_run_seq + 1,
                ));
            }
        };
        let kept = match ask {
            Ask::Build => None,
            Ask::Question { .. } => kept_build(service, pb, name, run.definition_version).await?,
        };
        let mut facts = Vec::new();
        let kept = match kept {
            Some(kept) => kept,
            None => match build(service, pb, run, document).await? {
                Ok((kept, outcome)) => {
                    facts.push(("prediction_built", outcome));
                    kept
                }
                Err(problem) => {
                    return Ok(Finish::at(
                        rejection(problem, &run.run_id),
                        run.last_run_seq + 1,
                    ));
                }
            },
        };
        let ending = match ask {
            Ask::Build => succeeded(run, outcome_of(&kept), None),
            Ask::Question { periods } => match answer(document, &kept, periods) {
                Ok(series) => succeeded(run, series, None),
                Err(problem) => rejection(problem, &run.run_id),
            },
        };
        Ok(Finish {
            ending,
            run_seq: run.last_run_seq + 1,
            facts,
            unrecorded: None,
        })
    }

    async fn quiet_after_ms(&self, _: &Service, _: &PlaybookRef, _: &Run) -> Result<i64, Problem> {
        Ok(PREDICTION_RUN_BOUND_MS)
    }

    async fn stop(
        &self,
        _: &Service,
        _: &PlaybookRef,
        run: &Run,
        _: &str,
        _: Option<&str>,
    ) -> Result<(), Problem> {
        Err(within_call(run))
    }
}

/// The latest build kept of `version`, if there is one.
async fn kept_build(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    version: i64,
) -> Result<Option<Kept>, Problem> {
    let Some(row) = service
        .store
        .get_view(pb, &kept_name(name))
        .await
        .map_err(store_problem)?
    else {
        return Ok(None);
    };
    if row.version != version {
        return Ok(None);
    }
    Ok(read_kept(&row.view))
}

fn read_kept(view: &Value) -> Option<Kept> {
    Some(Kept {
        xs: view["xs"].as_array()?.clone(),
        ys: serde_json::from_value(view["ys"].clone()).ok()?,
        build: serde_json::from_value(view["build"].clone()).ok()?,
    })
}

/// The outcome a build answers and records: the series' size, the season, each candidate with
/// its error, the pick and its parameters.
fn outcome_of(kept: &Kept) -> Value {
    let build = &kept.build;
    let parameters = build
        .candidates
        .iter()
        .find(|c| c.name == build.pick)
        .map(|c| c.parameters.clone())
        .unwrap_or(Value::Null);
    json!({
        "points": kept.ys.len(),
        "season": build.season,
        "season_found": build.season_found,
        "candidates": build.candidates,
        "pick": build.pick,
        "parameters": parameters,
    })
}

/// The problem of a prediction whose source could not give a series.
fn source_problem(name: &str, detail: impl Into<String>) -> Problem {
    Problem::conflict(
        format!("The prediction function {name} has no series to build on"),
        detail,
    )
    .with_kind("unworkable")
}

/// Gathers the series, fits the models and keeps the pick; the kept build and its outcome, or
/// why there is none.
async fn build(
    service: &Service,
    pb: &PlaybookRef,
    run: &Run,
    document: &Arc<PredictionDocument>,
) -> Result<Result<(Kept, Value), Problem>, Problem> {
    let name = &run.key.name;
    let (recall, input) = match &document.source {
        Source::Recall { name, input } => (name, input),
        // Reached only by a question whose version's build was replaced meanwhile.
        Source::Request { .. } => {
            return Ok(Err(source_problem(
                name,
                "Its series comes from a person through the inbox, and no build of this version is kept: ask for a build ({\"build\": true}) and answer its request.",
            )));
        }
    };
    let now_ms = run.started_at.timestamp_millis();
    let answer =
        match crate::recall_runs::answer_of(service, pb, recall, input.clone(), now_ms).await? {
            Ok(answer) => answer,
            Err(problem) => {
                // The recall function's own refusal, said of this prediction.
                let detail = format!(
                    "Its source, the recall function {recall}, answered: {} ({})",
                    problem.title, problem.detail
                );
                let reason = problem.reason;
                let mut refused = Problem::new(
                    reason,
                    format!("The prediction function {name} could not read its series"),
                    detail,
                );
                if let Some(kind) = problem.kind.clone() {
                    refused = refused.with_kind(kind);
                }
                return Ok(Err(refused));
            }
        };
    let (xs, ys) = match points_of(&answer) {
        Ok(points) => points,
        Err(None) => {
            return Ok(Err(source_problem(
                name,
                format!(
                    "The answer of the recall function {recall} is not a series with a line: its output shape must be series."
                ),
            )));
        }
        Err(Some(point)) => {
            return Ok(Err(source_problem(
                name,
                format!("A point of the series has no number y: {point}."),
            )));
        }
    };
    let kept = match fit(document, xs, ys).await? {
        Ok(kept) => kept,
        Err(error) => return Ok(Err(source_problem(name, error))),
    };
    let outcome = outcome_of(&kept);
    keep(service, pb, name, run.definition_version, &kept).await?;
    Ok(Ok((kept, outcome)))
}

/// The x and y of the points of a series' first line: `Err(None)` when it has no line,
/// `Err(Some(point))` for a point without a number y.
fn points_of(series: &Value) -> Result<(Vec<Value>, Vec<f64>), Option<Value>> {
    let points = series["lines"][0]["points"].as_array().ok_or(None)?;
    let mut xs = Vec::with_capacity(points.len());
    let mut ys = Vec::with_capacity(points.len());
    for point in points {
        let y = point["y"].as_f64().ok_or_else(|| Some(point.clone()))?;
        xs.push(point["x"].clone());
        ys.push(y);
    }
    Ok((xs, ys))
}

/// Fits the candidates on a series off the async threads; the build to keep, or why the
/// series cannot be built on.
async fn fit(
    document: &PredictionDocument,
    xs: Vec<Value>,
    ys: Vec<f64>,
) -> Result<Result<Kept, String>, Problem> {
    let options = auto_forecast::Options {
        horizon: document.horizon as usize,
        season: document.season.map(|s| s as usize),
        step: Some(step_of(document.period)),
    };
    let (ys, fitted) = tokio::task::spawn_blocking(move || {
        let fitted = auto_forecast::build(&ys, &options);
        (ys, fitted)
    })
    .await
    .map_err(|e| Problem::internal(&e))?;
    let build = match fitted {
        Ok(build) => build,
        Err(error) => return Ok(Err(error.to_string())),
    };
    // The x of the periods predicted must step from the last point before anything is kept.
    if let Err(error) = prediction::next_xs(&xs, document.period, 1) {
        return Ok(Err(error));
    }
    Ok(Ok(Kept { xs, ys, build }))
}

/// The time between two points as the forecaster counts it, whose calendar gives the seasons
/// a build without one looks for.
fn step_of(period: Period) -> Step {
    match period {
        Period::Months(months) => Step::Months(months),
        Period::Days(days) => Step::Days(days),
        Period::Seconds(seconds) => Step::Seconds(u64::from(seconds)),
    }
}

/// Keeps a build in place of the last one of its prediction.
async fn keep(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    version: i64,
    kept: &Kept,
) -> Result<(), Problem> {
    let store = service.store.as_ref();
    let row = RecallView {
        name: kept_name(name),
        version,
        revision: 0,
        view: json!({"xs": kept.xs, "ys": kept.ys, "build": kept.build}),
        folded_seq: 0,
        built: true,
        stalled: None,
        updated_at: chrono::Utc::now(),
    };
    // A newer version's row, or a build kept meanwhile of this one, is replaced only by the
    // latest: a build of an older version keeps nothing.
    for _ in 0..3 {
        let current = store.get_view(pb, &row.name).await.map_err(store_problem)?;
        let expected = match &current {
            Some(current) if current.version > version => return Ok(()),
            Some(current) if current.version == version => Some(current.revision),
            _ => None,
        };
        if store
            .put_view(pb, &row, expected)
            .await
            .map_err(store_problem)?
            .is_some()
        {
            return Ok(());
        }
    }
    Err(Problem::new(
        Reason::Unavailable,
        format!("The prediction function {name} could not keep its build"),
        "Other builds of it were kept at the same moment; ask again.",
    ))
}

/// A question's answer: the history, then the periods predicted, then the interval.
fn answer(document: &PredictionDocument, kept: &Kept, periods: u32) -> Result<Value, Problem> {
    let forecast = kept
        .build
        .forecast(periods as usize)
        .map_err(|e| Problem::conflict("The prediction could not be made", e.to_string()))?;
    let xs = prediction::next_xs(&kept.xs, document.period, periods as usize)
        .map_err(|e| Problem::conflict("The prediction could not be made", e))?;
    let line = |name: &str, xs: &[Value], ys: &[f64]| {
        json!({
            "name": name,
            "points": xs.iter().zip(ys).map(|(x, y)| json!({"x": x, "y": y})).collect::<Vec<_>>(),
        })
    };
    let mut lines = vec![
        line("history", &kept.xs, &kept.ys),
        line("prediction", &xs, &forecast.mean),
    ];
    if let (Some(lower), Some(upper)) = (&forecast.lower, &forecast.upper) {
        lines.push(line("lower", &xs, lower));
        lines.push(line("upper", &xs, upper));
    }
    let mut series = json!({ "lines": lines });
    if let Some(title) = &document.description {
        series["title"] = json!(title);
    }
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seasons a definition's `period` lets a build find: a day, a week and a year of its
    /// points, where each is a whole number.
    #[test]
    fn a_period_gives_the_seasons_of_its_calendar() {
        for (period, seasons) in [
            ("PT1H", vec![24, 168]),
            ("PT15M", vec![96, 672]),
            ("PT7M", vec![]),
            ("P1D", vec![7, 365]),
            ("P2D", vec![]),
            ("P1W", vec![52]),
            ("P1M", vec![12]),
            ("P3M", vec![4]),
            ("P1Y", vec![]),
        ] {
            let parsed = prediction::parse_period(period).expect(period);
            assert_eq!(
                auto_forecast::calendar_seasons(step_of(parsed)),
                seasons,
                "{period}"
            );
        }
    }
}
