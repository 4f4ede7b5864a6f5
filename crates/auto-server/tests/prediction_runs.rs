//! Prediction functions end to end through HTTP: a build over a recall function's series, the
//! questions answered from it, its limits, the season found from its period, the refusals of a
//! source with no series, and a series a person uploads through the inbox.

mod common;

use common::{TestServer, wait_for};
use serde_json::{Value, json};

/// Sales by month, as a series: the sum of each month's `sale.recorded` amounts.
const SALES_SERIES: &str = r#"---
description: Sales by month
events: [sale.recorded]
output:
  shape: series
---
Each sale counts in its month.

```ts
type View = Record<string, number>;
export const initial: View = {};
export function fold(view: View, event: any): View {
  view[event.data.month] = (view[event.data.month] ?? 0) + event.data.amount;
  return view;
}
export function answer(view: View) {
  const months = Object.keys(view).sort();
  return { lines: [{ name: "sales", points: months.map((m) => ({ x: m, y: view[m] })) }] };
}
```
"#;

fn sales_ahead(source: &str, horizon: u32) -> String {
    format!(
        "---\ndescription: Sales ahead\nsource:\n  recall: {source}\nhorizon: {horizon}\nperiod: P1M\nseason: 12\n---\nThe sales of the coming months.\n"
    )
}

/// A month's sales: a trend, a season of twelve and a wobble.
fn sales_of(month: usize) -> f64 {
    let season = [
        12.0, 9.0, 14.0, 18.0, 21.0, 25.0, 30.0, 28.0, 22.0, 17.0, 13.0, 20.0,
    ];
    100.0 + 2.0 * month as f64 + season[month % 12] + (month * 7 % 5) as f64
}

fn month_of(index: usize) -> String {
    format!("{}-{:02}-01", 2026 + index / 12, index % 12 + 1)
}

async fn record_sales(server: &TestServer, pb: &str, months: std::ops::Range<usize>) {
    for month in months {
        let reply = server
            .post(
                &format!("{pb}/events"),
                json!({
                    "type": "sale.recorded",
                    "source": "/shop",
                    "data": {"month": month_of(month), "amount": sales_of(month)},
                }),
            )
            .await;
        assert_eq!(reply.status, 201, "{:#}", reply.body);
    }
}

/// A server with the recall function `sales-series` and the prediction `sales-ahead` on it
/// (horizon 6) saved in a new playbook.
async fn with_sales_ahead() -> (TestServer, String) {
    let server = TestServer::start_standard().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "recall", "sales-series", SALES_SERIES)
        .await;
    server
        .save_definition(
            &pb,
            "prediction",
            "sales-ahead",
            &sales_ahead("sales-series", 6),
        )
        .await;
    (server, pb)
}

async fn predict(server: &TestServer, pb: &str, input: Value) -> (u16, Value) {
    let reply = server
        .start_run(pb, "prediction", "sales-ahead", json!({"input": input}))
        .await;
    (reply.status.as_u16(), reply.body)
}

fn line<'a>(series: &'a Value, name: &str) -> &'a Vec<Value> {
    let lines = series["lines"].as_array().expect("lines");
    let line = lines.iter().find(|l| l["name"] == name).expect(name);
    line["points"].as_array().expect("points")
}

#[tokio::test]
async fn a_build_picks_a_model_and_questions_answer_history_prediction_and_interval() {
    let (server, pb) = with_sales_ahead().await;
    record_sales(&server, &pb, 0..36).await;

    // A question before any build builds first, then answers the horizon.
    let (status, run) = predict(&server, &pb, json!({})).await;
    assert_eq!(status, 200, "{run:#}");
    let series = &run["output"];
    let names: Vec<&str> = series["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["history", "prediction", "lower", "upper"]);
    assert_eq!(line(series, "history").len(), 36);
    assert_eq!(
        line(series, "history")[0],
        json!({"x": "2026-01-01", "y": sales_of(0)})
    );
    let predicted = line(series, "prediction");
    let xs: Vec<&str> = predicted.iter().map(|p| p["x"].as_str().unwrap()).collect();
    assert_eq!(
        xs,
        [
            "2029-01-01",
            "2029-02-01",
            "2029-03-01",
            "2029-04-01",
            "2029-05-01",
            "2029-06-01"
        ]
    );
    for (k, point) in predicted.iter().enumerate() {
        let (y, truth) = (point["y"].as_f64().unwrap(), sales_of(36 + k));
        assert!(
            (y - truth).abs() / truth < 0.1,
            "month {k}: {y} against {truth}"
        );
        let (lower, upper) = (
            line(series, "lower")[k]["y"].as_f64().unwrap(),
            line(series, "upper")[k]["y"].as_f64().unwrap(),
        );
        assert!(lower < y && y < upper, "{lower} {y} {upper}");
    }

    // A build reports every candidate, the pick and its parameters.
    let (status, run) = predict(&server, &pb, json!({"build": true})).await;
    assert_eq!(status, 200, "{run:#}");
    let outcome = &run["output"];
    assert_eq!(outcome["points"], 36);
    assert_eq!(outcome["season"], 12);
    assert_eq!(outcome["season_found"], false);
    let candidates = outcome["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 6);
    assert!(candidates.len() <= auto_forecast::CANDIDATES_MAX);
    let pick = outcome["pick"].as_str().unwrap();
    let picked = candidates.iter().find(|c| c["name"] == pick).unwrap();
    let best = candidates
        .iter()
        .filter_map(|c| c["mase"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(picked["mase"].as_f64(), Some(best));
    assert_eq!(outcome["parameters"], picked["parameters"]);
    // The outcome is the build's fact in the log, recorded with the run's ending.
    let run_id = run["run_id"].as_str().unwrap();
    let types = server.event_types(&pb, run_id).await;
    assert_eq!(types, ["run_started", "prediction_built", "run_succeeded"]);
    let facts = server
        .events(&pb, &format!("run_id={run_id}&type=prediction_built"))
        .await;
    assert_eq!(facts[0]["data"]["pick"], outcome["pick"]);

    // A question answers from the latest build: more months recorded change nothing until
    // the next build.
    record_sales(&server, &pb, 36..48).await;
    let (status, run) = predict(&server, &pb, json!({"periods": 3})).await;
    assert_eq!(status, 200, "{run:#}");
    assert_eq!(line(&run["output"], "history").len(), 36);
    assert_eq!(line(&run["output"], "prediction").len(), 3);
    let (_, built) = predict(&server, &pb, json!({"build": true})).await;
    assert_eq!(built["output"]["points"], 48);
    let (_, run) = predict(&server, &pb, json!({"periods": 1})).await;
    assert_eq!(line(&run["output"], "prediction")[0]["x"], "2030-01-01");
}

#[tokio::test]
async fn periods_are_from_1_to_the_horizon_and_the_input_is_a_build_or_a_question() {
    let (server, pb) = with_sales_ahead().await;
    record_sales(&server, &pb, 0..30).await;
    let (status, run) = predict(&server, &pb, json!({"periods": 6})).await;
    assert_eq!(status, 200, "{run:#}");
    assert_eq!(line(&run["output"], "prediction").len(), 6);
    for (input, pointer, message) in [
        (
            json!({"periods": 7}),
            "/input/periods",
            "Expected a whole number of periods from 1 to the horizon, 6.",
        ),
        (
            json!({"periods": 0}),
            "/input/periods",
            "Expected a whole number of periods from 1 to the horizon, 6.",
        ),
        (
            json!({"build": false}),
            "/input/build",
            "Expected true: {\"build\": true} fits the models again.",
        ),
        (
            json!({"build": true, "periods": 2}),
            "/input/periods",
            "Not allowed beside build: a run builds or asks, not both.",
        ),
    ] {
        let reply = server
            .start_run(&pb, "prediction", "sales-ahead", json!({"input": input}))
            .await;
        reply.assert_problem(422, "invalid_input");
        assert_eq!(
            reply.body["issues"][0]["pointer"], pointer,
            "{:#}",
            reply.body
        );
        assert_eq!(reply.body["issues"][0]["message"], message);
    }
}

/// Without `season`, a build looks for one among the seasons the calendar gives the
/// definition's `period`: the sales, repeating every twelve points, have a season of 12 as
/// months and none as years (a cycle of yearly points is not a season).
#[tokio::test]
async fn a_season_absent_is_found_among_the_seasons_of_the_period() {
    let server = TestServer::start_standard().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "recall", "sales-series", SALES_SERIES)
        .await;
    for (name, period) in [("by-month", "P1M"), ("by-year", "P1Y")] {
        let document = format!(
            "---\ndescription: Sales ahead\nsource:\n  recall: sales-series\nhorizon: 6\nperiod: {period}\n---\nThe sales ahead.\n"
        );
        server
            .save_definition(&pb, "prediction", name, &document)
            .await;
    }
    record_sales(&server, &pb, 0..48).await;
    for (name, season) in [("by-month", json!(12)), ("by-year", Value::Null)] {
        let reply = server
            .start_run(&pb, "prediction", name, json!({"input": {"build": true}}))
            .await;
        assert_eq!(reply.status.as_u16(), 200, "{:#}", reply.body);
        let outcome = &reply.body["output"];
        assert_eq!(outcome["season"], season, "{name}: {outcome:#}");
        assert_eq!(outcome["season_found"], true, "{name}");
    }
}

#[tokio::test]
async fn a_source_without_a_series_refuses_the_run_with_why() {
    let server = TestServer::start_standard().await;
    let pb = server.playbook().await;
    // The recall function named does not exist.
    server
        .save_definition(&pb, "prediction", "sales-ahead", &sales_ahead("nowhere", 6))
        .await;
    let (status, problem) = predict(&server, &pb, json!({"build": true})).await;
    assert_eq!(status, 404, "{problem:#}");
    assert_eq!(
        problem["title"],
        "The prediction function sales-ahead could not read its series"
    );
    assert_eq!(
        problem["detail"],
        "Its source, the recall function nowhere, answered: Not found (The recall function nowhere does not exist in this playbook.)"
    );
    // Too few points for the horizon and a season: the forecaster's count, said plainly.
    server
        .save_definition(&pb, "recall", "sales-series", SALES_SERIES)
        .await;
    let updated = server
        .update_definition(
            &pb,
            "prediction",
            "sales-ahead",
            &sales_ahead("sales-series", 6),
        )
        .await;
    assert_eq!(updated.status, 200, "{:#}", updated.body);
    record_sales(&server, &pb, 0..18).await;
    let (status, problem) = predict(&server, &pb, json!({})).await;
    assert_eq!(status, 409, "{problem:#}");
    assert_eq!(problem["kind"], "unworkable");
    assert_eq!(
        problem["title"],
        "The prediction function sales-ahead has no series to build on"
    );
    assert_eq!(
        problem["detail"],
        "The series has 18 points; a horizon of 6 needs at least 19 (the horizon and 13 to train on)."
    );
}

/// A prediction whose series a person uploads through the inbox.
fn uploaded(expires: &str) -> String {
    format!(
        "---\ndescription: Sales ahead, from the books\nsource:\n  request: {{to: '{{{{ input.owner }}}}', expires: {expires}}}\nhorizon: 6\nperiod: P1M\nseason: 12\n---\nThe sales of the coming months.\n"
    )
}

/// The series of `months` months of sales, as a person uploads it.
fn sales_series(months: usize) -> Value {
    let points: Vec<Value> = (0..months)
        .map(|m| json!({"x": month_of(m), "y": sales_of(m)}))
        .collect();
    json!({"lines": [{"name": "sales", "points": points}]})
}

async fn open_requests(server: &TestServer, pb: &str) -> Vec<Value> {
    let reply = server.get(&format!("{pb}/requests?status=open")).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    reply.body["requests"].as_array().unwrap().clone()
}

async fn answer(server: &TestServer, pb: &str, request_id: &str, answer: Value) -> common::Reply {
    server
        .post(
            &format!("{pb}/requests/{request_id}/answer"),
            json!({ "answer": answer }),
        )
        .await
}

/// A server with the prediction `uploaded` (horizon 6, season 12, a request that waits two days)
/// saved in a new playbook.
async fn with_uploaded() -> (TestServer, String) {
    let server = TestServer::start_standard().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "prediction", "uploaded", &uploaded("P2D"))
        .await;
    (server, pb)
}

async fn upload_run(server: &TestServer, pb: &str, body: Value) -> common::Reply {
    server.start_run(pb, "prediction", "uploaded", body).await
}

#[tokio::test]
async fn a_series_uploaded_through_the_inbox_builds_when_it_is_answered() {
    let (server, pb) = with_uploaded().await;
    let reply = upload_run(
        &server,
        &pb,
        json!({"run_id": "books-1", "input": {"build": true, "owner": "ana@example.com"}}),
    )
    .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "started");

    let requests = open_requests(&server, &pb).await;
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let request = &requests[0];
    assert_eq!(request["to"], "ana@example.com");
    assert_eq!(request["run_id"], "books-1");
    assert_eq!(
        request["definition"],
        json!({"type": "prediction", "name": "uploaded", "version": 1})
    );
    let message = request["message"].as_str().unwrap();
    assert!(message.starts_with("Sales ahead, from the books\n\nUpload the series the prediction function **uploaded** is built on"), "{message}");
    assert!(message.contains("one every P1M"), "{message}");
    assert!(message.contains("at least 19 points"), "{message}");
    assert!(request["output_schema"].is_object(), "{request:#}");
    let request_id = request["request_id"].as_str().unwrap();

    // Not a series: the shape's own words, and the request stays open.
    let reply = answer(&server, &pb, request_id, json!({"points": [1, 2]})).await;
    reply.assert_problem(422, "invalid_input");
    // Too short to hold out the horizon and train: the build's words, at the points.
    let reply = answer(&server, &pb, request_id, sales_series(18)).await;
    reply.assert_problem(422, "invalid_input");
    assert_eq!(
        reply.body["issues"][0]["pointer"], "/answer/lines/0/points",
        "{:#}",
        reply.body
    );
    assert_eq!(
        reply.body["issues"][0]["message"],
        "The series has 18 points; a horizon of 6 needs at least 19 (the horizon and 13 to train on)."
    );
    assert_eq!(open_requests(&server, &pb).await.len(), 1);

    // Three years of months, taken: the run ends with the build, its fact before the ending.
    let reply = answer(&server, &pb, request_id, sales_series(36)).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "answered");
    assert_eq!(reply.body["answer"], sales_series(36));
    let run = server.get(&format!("{pb}/runs/books-1")).await.body;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"]["points"], 36);
    assert_eq!(run["output"]["season"], 12);
    assert!(run["output"]["pick"].is_string(), "{run:#}");
    assert_eq!(
        server.event_types(&pb, "books-1").await,
        [
            "run_started",
            "request_opened",
            "request_answered",
            "prediction_built",
            "run_succeeded"
        ]
    );
    // A second answer finds the request closed.
    let again = answer(&server, &pb, request_id, sales_series(36)).await;
    again.assert_problem(409, "conflict");

    // A question answers from the build kept, asking nobody.
    let reply = upload_run(&server, &pb, json!({"input": {"periods": 2}})).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(line(&reply.body["output"], "history").len(), 36);
    let months: Vec<&Value> = line(&reply.body["output"], "prediction")
        .iter()
        .map(|p| &p["x"])
        .collect();
    assert_eq!(months, [&json!("2029-01-01"), &json!("2029-02-01")]);
    assert!(open_requests(&server, &pb).await.is_empty());

    // Whom to ask must render from the input.
    let reply = upload_run(&server, &pb, json!({"input": {"build": true}})).await;
    reply.assert_problem(422, "invalid_input");
    assert_eq!(
        reply.body["title"],
        "The prediction function uploaded cannot render its request"
    );
    assert_eq!(reply.body["issues"][0]["path"], "/source/request/to");
    assert!(open_requests(&server, &pb).await.is_empty());
}

#[tokio::test]
async fn a_question_before_any_build_waits_for_the_series_and_answers_its_periods() {
    let (server, pb) = with_uploaded().await;
    let reply = upload_run(
        &server,
        &pb,
        json!({"run_id": "ask-1", "input": {"periods": 3, "owner": "ops"}}),
    )
    .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    // The same run id, asked again, is the run as it stands: nobody is asked twice.
    let again = upload_run(
        &server,
        &pb,
        json!({"run_id": "ask-1", "input": {"periods": 3, "owner": "ops"}}),
    )
    .await;
    assert_eq!(again.status, 202, "{:#}", again.body);
    let requests = open_requests(&server, &pb).await;
    assert_eq!(requests.len(), 1);
    let request_id = requests[0]["request_id"].as_str().unwrap();
    // The fewest points a horizon of 6 and a season of 12 take (the request says 19): taken.
    let reply = answer(&server, &pb, request_id, sales_series(19)).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let run = server.get(&format!("{pb}/runs/ask-1")).await.body;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(line(&run["output"], "history").len(), 19);
    assert_eq!(line(&run["output"], "prediction").len(), 3);
    assert_eq!(line(&run["output"], "prediction")[0]["x"], "2027-08-01");
}

#[tokio::test]
async fn a_request_for_the_series_is_cancelled_with_its_run_and_expires_unanswered() {
    let (server, pb) = with_uploaded().await;
    server
        .save_definition(&pb, "prediction", "hurried", &uploaded("PT1S"))
        .await;
    let build = json!({"build": true, "owner": "ops"});
    let reply = upload_run(&server, &pb, json!({"run_id": "c-1", "input": build})).await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let reply = server
        .post(
            &format!("{pb}/runs/c-1/cancel"),
            json!({"detail": "Not this quarter"}),
        )
        .await;
    assert!(
        reply.status == 200 || reply.status == 202,
        "{:#}",
        reply.body
    );
    let run = server.get(&format!("{pb}/runs/c-1")).await.body;
    assert_eq!(run["status"], "rejected", "{run:#}");
    assert_eq!(run["problem"]["reason"], "cancelled");
    assert_eq!(
        run["problem"]["title"],
        "The prediction function uploaded was cancelled"
    );
    assert!(open_requests(&server, &pb).await.is_empty());

    let reply = server
        .start_run(
            &pb,
            "prediction",
            "hurried",
            json!({"run_id": "e-1", "input": build}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let run = server
        .ended(&pb, "e-1", std::time::Duration::from_secs(20))
        .await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    assert_eq!(run["problem"]["reason"], "unanswered");
    assert_eq!(run["problem"]["kind"], "expired");
    assert_eq!(
        run["problem"]["title"],
        "The prediction function hurried was not answered"
    );
}

/// The workflow page's call of a prediction function: a build, then a question.
const BUILD_THEN_ASK: &str = r#"do:
  - build:
      call: run_definition
      with: { type: prediction, name: sales-ahead, input: { build: true } }
      output:
        as: '${ ({ pick: $data.pick }) }'
  - ask:
      call: run_definition
      with: { type: prediction, name: sales-ahead, input: { periods: 2 } }
      output:
        as: '${ ({ pick: $input.pick, months: $data.lines[1].points.map((p) => p.x) }) }'
"#;

#[tokio::test]
async fn a_workflow_calls_a_prediction_to_build_and_to_ask() {
    let (server, pb) = with_sales_ahead().await;
    server
        .save_definition(&pb, "workflow", "plan", &common::workflow(BUILD_THEN_ASK))
        .await;
    record_sales(&server, &pb, 0..30).await;
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "plan",
            json!({"input": {}, "run_id": "plan-1"}),
        )
        .await;
    assert!(
        reply.status == 200 || reply.status == 202,
        "{:#}",
        reply.body
    );
    let run = server
        .ended(&pb, "plan-1", std::time::Duration::from_secs(30))
        .await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert!(run["output"]["pick"].is_string(), "{run:#}");
    assert_eq!(run["output"]["months"], json!(["2028-07-01", "2028-08-01"]));
}

/// A workflow that asks for a build of a series a person uploads, then a question.
const UPLOAD_THEN_ASK: &str = r#"do:
  - build:
      call: run_definition
      with: { type: prediction, name: uploaded, input: { build: true, owner: ops } }
      output:
        as: '${ ({ points: $data.points }) }'
  - ask:
      call: run_definition
      with: { type: prediction, name: uploaded, input: { periods: 1 } }
      output:
        as: '${ ({ points: $input.points, next: $data.lines[1].points[0].x }) }'
"#;

#[tokio::test]
async fn a_workflow_waits_for_the_series_a_person_uploads() {
    let (server, pb) = with_uploaded().await;
    server
        .save_definition(&pb, "workflow", "plan", &common::workflow(UPLOAD_THEN_ASK))
        .await;
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "plan",
            json!({"input": {}, "run_id": "plan-2"}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let request = wait_for(
        std::time::Duration::from_secs(20),
        "the request for the series",
        || async { open_requests(&server, &pb).await.first().cloned() },
    )
    .await;
    let request_id = request["request_id"].as_str().unwrap();
    let reply = answer(&server, &pb, request_id, sales_series(24)).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let run = server
        .ended(&pb, "plan-2", std::time::Duration::from_secs(30))
        .await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"points": 24, "next": "2028-01-01"}));
}
