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

use std::sync::Arc;

use auto_engine::prediction::{self, Ask, PredictionDocument, Source};
use auto_store::{NewRun, PlaybookRef, RecallView, Run};
use serde_json::{Value, json};

use crate::documents::Checked;
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::runner::{Finish, Function};
use crate::runs::{rejection, succeeded};
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

/// The runner of prediction functions.
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
        let ask = match prediction::read_ask(&run.input, document.horizon) {
            Ok(ask) => ask,
            Err((pointer, message)) => {
                let problem = Problem::invalid_input(
                    format!("The prediction function {name} refused its input"),
                    format!("{pointer}: {message}"),
                )
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
        Err(crate::runner::within_call(run))
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
    let Source::Recall {
        name: recall,
        input,
    } = &document.source;
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
    let Some(points) = answer["lines"][0]["points"].as_array() else {
        return Ok(Err(source_problem(
            name,
            format!(
                "The answer of the recall function {recall} is not a series with a line: its output shape must be series."
            ),
        )));
    };
    let mut xs = Vec::with_capacity(points.len());
    let mut ys = Vec::with_capacity(points.len());
    for point in points {
        match point["y"].as_f64() {
            Some(y) => {
                xs.push(point["x"].clone());
                ys.push(y);
            }
            None => {
                return Ok(Err(source_problem(
                    name,
                    format!("A point of the series has no number y: {point}."),
                )));
            }
        }
    }
    let options = auto_forecast::Options {
        horizon: document.horizon as usize,
        season: document.season.map(|s| s as usize),
    };
    let fitted = {
        let ys = ys.clone();
        tokio::task::spawn_blocking(move || auto_forecast::build(&ys, &options))
            .await
            .map_err(|e| Problem::internal(&e))?
    };
    let build = match fitted {
        Ok(build) => build,
        Err(error) => return Ok(Err(source_problem(name, error.to_string()))),
    };
    // The x of the periods predicted must step from the last point before anything is kept.
    if let Err(error) = prediction::next_xs(&xs, document.period, 1) {
        return Ok(Err(source_problem(name, error)));
    }
    let kept = Kept { xs, ys, build };
    let outcome = outcome_of(&kept);
    keep(service, pb, name, run.definition_version, &kept).await?;
    Ok(Ok((kept, outcome)))
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
