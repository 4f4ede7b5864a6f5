//! `auto run` and `auto runs`: run a definition and print its output, and read, list, follow
//! and cancel runs, over `run_definition`, `get_run`, `list_runs`, `list_playbook_events` (a
//! run's history) and `cancel_run`.
//!
//! What the command line names is checked before any request (exit 2): TYPE/NAME, the run id,
//! and `--input`, which is JSON, `@FILE` or `-` for stdin (a file or stdin that cannot be read
//! or holds no JSON exits 4).

use std::process::ExitCode;

use anyhow::Result;
use auto_engine::definitions::{DefinitionType, check_name};
use auto_server::events::EVENTS_PAGE_MAX;
use auto_server::runs::{RUNS_PAGE_MAX, check_run_id};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

use crate::client::{
    Client, NO_DATA, encode, json_argument, parse_json, pb_path, print_problem, problem_lines,
    query,
};
use crate::{PlaybookArgs, Remote, UsageError};

/// A definition named on the command line as `TYPE/NAME`.
#[derive(Clone, Debug)]
pub struct Target {
    def_type: DefinitionType,
    name: String,
}

/// Parses `TYPE/NAME`, such as `computation/month-window`.
fn parse_target(text: &str) -> Result<Target, String> {
    let Some((type_text, name)) = text.split_once('/') else {
        return Err(format!(
            "{text:?} is not TYPE/NAME, such as computation/month-window."
        ));
    };
    let def_type = type_text.parse::<DefinitionType>()?;
    check_name(name)?;
    Ok(Target {
        def_type,
        name: name.to_owned(),
    })
}

fn parse_run_id(text: &str) -> Result<String, String> {
    check_run_id(text).map(|()| text.to_owned())
}

fn parse_type(text: &str) -> Result<String, String> {
    text.parse::<DefinitionType>()
        .map(|t| t.as_str().to_owned())
}

fn parse_name(text: &str) -> Result<String, String> {
    check_name(text).map(|()| text.to_owned())
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// The definition, such as computation/month-window; its latest active version runs.
    #[arg(value_name = "TYPE/NAME", value_parser = parse_target)]
    target: Target,
    /// The input: JSON, @FILE for a file of JSON, or - for stdin; {} when left out.
    #[arg(long, value_name = "JSON|@FILE|-")]
    input: Option<String>,
    /// Your id for the run (1 to 128 of A-Z a-z 0-9 . _ : -). Run again under the same id and
    /// input, the server answers what it recorded instead of running it twice.
    #[arg(long, value_parser = parse_run_id)]
    run_id: Option<String>,
    /// Also print the run's id and record, on stderr, so stdout stays the output.
    #[arg(long)]
    record: bool,
    /// When the run goes on past the request (a workflow that waits), follow it to its end
    /// and print what a run that ended prints.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    at: PlaybookArgs,
    #[command(flatten)]
    remote: Remote,
}

#[derive(Subcommand)]
pub enum RunsCommand {
    /// Show a run: its definition, status, input, output, record or problem.
    Get {
        /// The run's id.
        #[arg(value_name = "ID", value_parser = parse_run_id)]
        run_id: String,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the playbook's runs, newest first.
    List {
        /// Only runs of this type.
        #[arg(long = "type", value_name = "TYPE", value_parser = parse_type)]
        def_type: Option<String>,
        /// Only runs of definitions of this name.
        #[arg(long, value_parser = parse_name)]
        name: Option<String>,
        /// Only runs with this status. `cancelled` is a run that ended cancelled: the server
        /// records it `rejected` with the reason `cancelled`, so it asks for both.
        #[arg(long, value_parser = ["started", "succeeded", "rejected", "failed", CANCELLED])]
        status: Option<String>,
        /// Only runs whose problem has this reason.
        #[arg(long, value_parser = [
            "invalid_input", "forbidden", "not_found", "conflict", "unavailable", "cancelled",
            "unanswered", "failed",
        ])]
        reason: Option<String>,
        /// Only runs started at or after this time: RFC 3339 (2026-12-01T09:00:00Z), or a time
        /// ago such as 90s, 15m, 2h or 7d.
        #[arg(long, value_name = "TIME", value_parser = parse_time)]
        since: Option<String>,
        /// Only runs started before this time, written as for --since.
        #[arg(long, value_name = "TIME", value_parser = parse_time)]
        until: Option<String>,
        /// At most this many runs (the server's default is 50).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=RUNS_PAGE_MAX as i64))]
        limit: Option<u32>,
        /// The runs after this one, as the previous page's `more: --after ID` says.
        #[arg(long, value_name = "ID", value_parser = parse_run_id)]
        after: Option<String>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Print a run's steps as they happen, on stderr, then its output (exit 0) or its problem
    /// (exit 1). A run that has ended prints its whole history at once.
    Follow {
        /// The run's id.
        #[arg(value_name = "ID", value_parser = parse_run_id)]
        run_id: String,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Send an event to a run (`send_run_event`): kept until one of its `listen` tasks takes
    /// it. An id the run received before is ignored, so a retry with `--id` is safe.
    Send {
        /// The run's id.
        #[arg(value_name = "ID", value_parser = parse_run_id)]
        run_id: String,
        /// The event's type, as the run's `listen` task names it.
        #[arg(value_name = "TYPE")]
        event_type: String,
        /// The data, as JSON.
        #[arg(long)]
        data: Option<String>,
        /// The event's id; a new one when left out.
        #[arg(long = "id", value_name = "EVENT_ID")]
        event_id: Option<String>,
        /// The event's source, a URI reference; /callers/<caller> when left out.
        #[arg(long)]
        source: Option<String>,
        /// What the event is about, within its source.
        #[arg(long)]
        subject: Option<String>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Cancel a run that is still going: print that it is being cancelled, then its state.
    Cancel {
        /// The run's id.
        #[arg(value_name = "ID", value_parser = parse_run_id)]
        run_id: String,
        /// Why, in your words.
        #[arg(long)]
        detail: Option<String>,
        /// Wait until the run has ended and print its end: exit 0 when it ended cancelled, 1
        /// when it ended otherwise first.
        #[arg(long)]
        wait: bool,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
}

/// The input `--input` gives: the JSON itself, a file's (`@FILE`) or stdin's (`-`).
fn read_input(input: &str) -> Result<Value> {
    json_argument(input, "--input")
}

/// How long `auto run --wait` and `auto runs follow` pause before opening a stream again.
const WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(250);

pub async fn run(args: RunArgs) -> Result<ExitCode> {
    let mut body = json!({});
    if let Some(input) = &args.input {
        body["input"] = read_input(input)?;
    }
    if let Some(run_id) = &args.run_id {
        body["run_id"] = json!(run_id);
    }
    let path = format!(
        "{}/definitions/{}/{}/runs",
        pb_path(&args.at),
        args.target.def_type,
        args.target.name
    );
    let client = Client::new(args.remote);
    let answer = client.send(Method::POST, &path, Some(body)).await?;
    if !answer.ok() {
        return client.refused(&answer.body);
    }
    let run = answer.body;
    if args.wait && run["status"] == "started" {
        let run_id = run["run_id"].as_str().unwrap_or("");
        return match follow(&client, &args.at, run_id, false).await? {
            Ok(ended) => print_ended(&client, &ended, args.record),
            Err(problem) => client.refused(&problem),
        };
    }
    if client.remote.json {
        println!("{}", serde_json::to_string_pretty(&run)?);
        return Ok(exit_of(&run));
    }
    let run_id = run["run_id"].as_str().unwrap_or("");
    match run["status"].as_str() {
        Some("succeeded") => {
            print_output(&run["output"]);
            if args.record {
                eprintln!("record of the run {run_id}:");
                eprintln!("{}", serde_json::to_string_pretty(&run["record"])?);
            }
            Ok(ExitCode::SUCCESS)
        }
        Some("started") => {
            println!("{run_id}");
            eprintln!(
                "The run {run_id} has started and goes on; follow it with `auto runs follow \
                 {run_id}`."
            );
            Ok(ExitCode::SUCCESS)
        }
        // A run that ended without success but came back as a run, not as its problem.
        _ => {
            print_problem(&run["problem"]);
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The event types that end a run.
const RUN_ENDINGS: [&str; 3] = ["run_succeeded", "run_rejected", "run_failed"];

/// Reads a run until it ends; `Ok(Err(problem))` is a refusal of a read. With `steps`, each
/// event of its history is printed on stderr as it is recorded.
///
/// The run's events come from the playbook's events stream, resumed after the last one read
/// when it breaks off (a server stopping, say), so nothing is polled while the run waits.
///
/// Invariant: a run's ending is recorded with its last events, and the stream shows events in
/// `seq` order, so once its ending has come, every event of its history has been printed; and
/// a run read as ended before the stream opened has all of its events listed after it.
async fn follow(
    client: &Client,
    at: &PlaybookArgs,
    run_id: &str,
    steps: bool,
) -> Result<Result<Value, Value>> {
    let run_path = format!("{}/runs/{}", pb_path(at), encode(run_id));
    let stream_path = format!(
        "{}/events/stream{}",
        pb_path(at),
        query(&[("run_id", Some(run_id.to_owned()))])
    );
    // The seq of the last event printed.
    let mut after: Option<String> = None;
    loop {
        let answer = client.send(Method::GET, &run_path, None).await?;
        if !answer.ok() {
            return Ok(Err(answer.body));
        }
        if answer.body["status"] != "started" {
            if steps && let Err(problem) = print_new_steps(client, at, run_id, &mut after).await? {
                return Ok(Err(problem));
            }
            return Ok(Ok(answer.body));
        }
        let mut stream = match client.stream(&stream_path, after.as_deref()).await? {
            Ok(stream) => stream,
            Err(problem) => return Ok(Err(problem)),
        };
        let mut ended = false;
        while let Some(message) = stream.next().await {
            if message.event.as_deref() == Some("error") {
                break;
            }
            if let Some(id) = message.id {
                after = Some(id);
            }
            if steps {
                let event: Value = serde_json::from_str(&message.data).unwrap_or(Value::Null);
                eprintln!("{}", step_line(&event));
            }
            if RUN_ENDINGS.contains(&message.event.as_deref().unwrap_or_default()) {
                ended = true;
                break;
            }
        }
        // The run ended, and is read at once; or the stream broke off, and is opened again
        // after the last event shown, after a pause that keeps a failing server from being
        // hammered.
        if !ended {
            tokio::time::sleep(WAIT_POLL).await;
        }
    }
}

/// Prints the run's events after the cursor, page by page, and moves the cursor past them.
async fn print_new_steps(
    client: &Client,
    at: &PlaybookArgs,
    run_id: &str,
    after: &mut Option<String>,
) -> Result<Result<(), Value>> {
    loop {
        let q = query(&[
            ("run_id", Some(run_id.to_owned())),
            ("after", after.clone()),
            ("limit", Some(EVENTS_PAGE_MAX.to_string())),
        ]);
        let answer = client
            .send(Method::GET, &format!("{}/events{q}", pb_path(at)), None)
            .await?;
        if !answer.ok() {
            return Ok(Err(answer.body));
        }
        let events = answer.body["events"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for event in &events {
            eprintln!("{}", step_line(event));
            *after = Some(event["seq"].to_string());
        }
        if answer.body["next"].is_null() || events.is_empty() {
            return Ok(Ok(()));
        }
    }
}

/// One event of a run's history for people: its time, type, and what it is about, such as
/// `09:30:01  step_completed    /do/0/pause`.
fn step_line(event: &Value) -> String {
    let time = time_of(&event["time"])
        .map(|t| t.format("%H:%M:%S").to_string())
        .unwrap_or_default();
    let data = &event["data"];
    let mut about = Vec::new();
    if let Some(reference) = data["reference"].as_str() {
        about.push(reference.to_owned());
    }
    if let (Some(def_type), Some(name)) = (data["type"].as_str(), data["definition"].as_str()) {
        about.push(format!("{def_type}/{name}"));
    }
    for key in ["child_run_id", "request_id", "tool", "model"] {
        if let Some(text) = data[key].as_str() {
            about.push(text.to_owned());
        }
    }
    for key in ["error", "problem"] {
        if let Some(title) = data[key]["title"].as_str() {
            about.push(title.to_owned());
        }
    }
    if data.is_null() && event["data_bytes"].is_null() {
        about.push(NO_DATA.to_owned());
    }
    format!(
        "{time}  {:<16}  {}",
        event["type"].as_str().unwrap_or(""),
        about.join("  ")
    )
    .trim_end()
    .to_owned()
}

/// Prints a run that ended: its output on stdout (0), or its problem on stderr (1); the whole
/// run as JSON with `--json`.
fn print_ended(client: &Client, run: &Value, record: bool) -> Result<ExitCode> {
    if client.remote.json {
        println!("{}", serde_json::to_string_pretty(run)?);
        return Ok(exit_of(run));
    }
    if run["status"] != "succeeded" {
        // A run that ended otherwise shows its problem, as a rejection of the request does.
        return client.refused(&run["problem"]);
    }
    print_output(&run["output"]);
    if record {
        eprintln!(
            "record of the run {}:",
            run["run_id"].as_str().unwrap_or("")
        );
        eprintln!("{}", serde_json::to_string_pretty(&run["record"])?);
    }
    Ok(ExitCode::SUCCESS)
}

/// 0 for a run that succeeded or goes on, 1 for one that ended otherwise.
fn exit_of(run: &Value) -> ExitCode {
    match run["status"].as_str() {
        Some("succeeded" | "started") => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

/// A run's output: text as it is, anything else as pretty JSON.
fn print_output(output: &Value) {
    match output {
        Value::String(text) if text.ends_with('\n') => print!("{text}"),
        Value::String(text) => println!("{text}"),
        other => println!(
            "{}",
            serde_json::to_string_pretty(other).unwrap_or_default()
        ),
    }
}

pub async fn runs(command: RunsCommand) -> Result<ExitCode> {
    match command {
        RunsCommand::Get { run_id, at, remote } => {
            let path = format!("{}/runs/{}", pb_path(&at), encode(&run_id));
            Client::new(remote)
                .print(Method::GET, &path, None, print_run)
                .await
        }
        RunsCommand::List {
            def_type,
            name,
            status,
            reason,
            since,
            until,
            limit,
            after,
            at,
            remote,
        } => {
            let (status, reason) = status_query(status, reason)?;
            let q = query(&[
                ("type", def_type),
                ("name", name),
                ("status", status),
                ("reason", reason),
                ("since", since),
                ("until", until),
                ("after", after),
                ("limit", limit.map(|l| l.to_string())),
            ]);
            let path = format!("{}/runs{q}", pb_path(&at));
            Client::new(remote)
                .print(Method::GET, &path, None, print_runs)
                .await
        }
        RunsCommand::Follow { run_id, at, remote } => {
            let client = Client::new(remote);
            match follow(&client, &at, &run_id, true).await? {
                Ok(run) => print_ended(&client, &run, false),
                Err(problem) => client.refused(&problem),
            }
        }
        RunsCommand::Send {
            run_id,
            event_type,
            data,
            event_id,
            source,
            subject,
            at,
            remote,
        } => {
            let mut body = json!({"type": event_type});
            if let Some(data) = data {
                body["data"] = parse_json(&data, "--data")?;
            }
            for (key, value) in [("id", event_id), ("source", source), ("subject", subject)] {
                if let Some(value) = value {
                    body[key] = json!(value);
                }
            }
            let path = format!("{}/runs/{}/events", pb_path(&at), encode(&run_id));
            Client::new(remote)
                .print(Method::POST, &path, Some(body), print_sent)
                .await
        }
        RunsCommand::Cancel {
            run_id,
            detail,
            wait,
            at,
            remote,
        } => cancel(Client::new(remote), &at, &run_id, detail, wait).await,
    }
}

/// `--status cancelled`: a run that ended `rejected` with the reason `cancelled`.
const CANCELLED: &str = "cancelled";

/// The `status` and `reason` of `list_runs` for `--status` and `--reason`; `--status
/// cancelled` is `rejected` with the reason `cancelled`, and another `--reason` beside it is a
/// wrong command line.
fn status_query(
    status: Option<String>,
    reason: Option<String>,
) -> Result<(Option<String>, Option<String>)> {
    if status.as_deref() != Some(CANCELLED) {
        return Ok((status, reason));
    }
    match reason.as_deref() {
        None | Some(CANCELLED) => Ok((Some("rejected".into()), Some(CANCELLED.into()))),
        Some(other) => Err(UsageError(format!(
            "--status cancelled is a run rejected with the reason cancelled; it cannot also \
             have the reason {other}: leave out --reason, or use --status rejected"
        ))
        .into()),
    }
}

/// `cancel_run`: says the run is being cancelled, asks, and prints the run as the server
/// answered it; with `wait`, follows the run to its end and prints that.
async fn cancel(
    client: Client,
    at: &PlaybookArgs,
    run_id: &str,
    detail: Option<String>,
    wait: bool,
) -> Result<ExitCode> {
    let path = format!("{}/runs/{}/cancel", pb_path(at), encode(run_id));
    let body = match detail {
        Some(detail) => json!({ "detail": detail }),
        None => json!({}),
    };
    eprintln!("Cancelling the run {run_id}...");
    let answer = client.send(Method::POST, &path, Some(body)).await?;
    if !answer.ok() {
        return client.refused(&answer.body);
    }
    let mut run = answer.body;
    if wait && run["status"] == "started" {
        eprintln!("The run {run_id} is being cancelled; waiting for it to end...");
        run = match follow(&client, at, run_id, false).await? {
            Ok(ended) => ended,
            Err(problem) => return client.refused(&problem),
        };
    }
    if client.remote.json {
        println!("{}", serde_json::to_string_pretty(&run)?);
    } else {
        print_run(&run);
    }
    let cancelled = run["problem"]["reason"] == CANCELLED;
    if run["status"] == "started" {
        eprintln!(
            "The run {run_id} is being cancelled; `auto runs get {run_id}` shows when it has \
             ended, or cancel with --wait to wait for it."
        );
        Ok(ExitCode::SUCCESS)
    } else if cancelled {
        eprintln!("The run {run_id} ended cancelled.");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "The run {run_id} ended {} before the cancellation took hold.",
            run["status"].as_str().unwrap_or("")
        );
        Ok(ExitCode::FAILURE)
    }
}

/// `send_run_event`'s answer: the event's id, and whether the run had it already.
fn print_sent(v: &Value) {
    let id = v["id"].as_str().unwrap_or_default();
    let run_id = v["run_id"].as_str().unwrap_or_default();
    if v["duplicate"] == json!(true) {
        println!("{id}: the run {run_id} received this event before; ignored");
    } else {
        println!("{id}: sent to the run {run_id}");
    }
}

fn time_of(value: &Value) -> Option<DateTime<Utc>> {
    value.as_str()?.parse().ok()
}

/// How long a run took, from `started_at` to `ended_at`; `-` while it goes on.
fn duration(run: &Value) -> String {
    let (Some(started), Some(ended)) = (time_of(&run["started_at"]), time_of(&run["ended_at"]))
    else {
        return "-".into();
    };
    let ms = (ended - started).num_milliseconds().max(0);
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1_000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A time to the second, in UTC: `2026-02-01T09:30:00Z`.
fn short_time(value: &Value) -> String {
    match time_of(value) {
        Some(time) => time.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => value.as_str().unwrap_or("-").to_owned(),
    }
}

fn definition_of(run: &Value) -> String {
    format!(
        "{}/{}",
        run["type"].as_str().unwrap_or(""),
        run["name"].as_str().unwrap_or("")
    )
}

fn print_run(run: &Value) {
    println!("run:        {}", run["run_id"].as_str().unwrap_or(""));
    println!(
        "definition: {} v{}",
        definition_of(run),
        run["definition_version"]
    );
    println!("status:     {}", run["status"].as_str().unwrap_or(""));
    println!(
        "started:    {} by {}",
        run["started_at"].as_str().unwrap_or(""),
        run["started_by"].as_str().unwrap_or("")
    );
    if let Some(ended) = run["ended_at"].as_str() {
        println!("ended:      {ended}, after {}", duration(run));
    }
    if let Some(input) = run.get("input") {
        println!("input:      {input}");
    }
    if !run["record"].is_null() {
        println!("record:     {}", run["record"]);
    }
    if !run["problem"].is_null() {
        let (title, lines) = problem_lines(&run["problem"]);
        println!("problem:    {title}");
        for line in lines {
            println!("  {line}");
        }
    }
    if let Some(output) = run.get("output") {
        println!("output:");
        print_output(output);
    }
}

/// A time of `--since` or `--until`, as RFC 3339 in UTC: one given so, or one a number of
/// seconds (s), minutes (m), hours (h) or days (d) before now.
fn parse_time(text: &str) -> Result<String, String> {
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time
            .to_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    let ago = text
        .char_indices()
        .last()
        .and_then(|(at, unit)| {
            let count: i64 = text[..at].parse().ok().filter(|n| *n >= 0)?;
            match unit {
                's' => chrono::Duration::try_seconds(count),
                'm' => chrono::Duration::try_minutes(count),
                'h' => chrono::Duration::try_hours(count),
                'd' => chrono::Duration::try_days(count),
                _ => None,
            }
        })
        .ok_or_else(|| {
            format!(
                "{text:?} is neither a time in RFC 3339 form (2026-12-01T09:00:00Z) nor a time \
                 ago such as 90s, 15m, 2h or 7d"
            )
        })?;
    let time = chrono::Utc::now()
        .checked_sub_signed(ago)
        .ok_or_else(|| format!("{text:?} is too long ago"))?;
    Ok(time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// The runs as a table: run id, definition, version, status, start and duration.
fn print_runs(list: &Value) {
    let runs = list["runs"].as_array().cloned().unwrap_or_default();
    if runs.is_empty() {
        eprintln!("no runs");
    } else {
        let mut rows = vec![[
            "RUN ID".to_owned(),
            "DEFINITION".into(),
            "VERSION".into(),
            "STATUS".into(),
            "STARTED".into(),
            "DURATION".into(),
        ]];
        rows.extend(runs.iter().map(|run| {
            [
                run["run_id"].as_str().unwrap_or("").to_owned(),
                definition_of(run),
                format!("v{}", run["definition_version"]),
                run["status"].as_str().unwrap_or("").to_owned(),
                short_time(&run["started_at"]),
                duration(run),
            ]
        }));
        print_table(&rows);
    }
    if let Some(next) = list["next"].as_str() {
        eprintln!("more: --after {next}");
    }
}

/// Rows in columns two spaces apart, each as wide as its widest cell; the last is not padded.
fn print_table<const N: usize>(rows: &[[String; N]]) {
    let mut widths = [0; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        println!("{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_each_scale() {
        let run = |ms: i64| {
            let started = "2026-02-01T09:00:00Z".parse::<DateTime<Utc>>().unwrap();
            let ended = started + chrono::Duration::milliseconds(ms);
            json!({"started_at": started.to_rfc3339(), "ended_at": ended.to_rfc3339()})
        };
        assert_eq!(duration(&run(0)), "0 ms");
        assert_eq!(duration(&run(999)), "999 ms");
        assert_eq!(duration(&run(1_000)), "1.0 s");
        assert_eq!(duration(&run(59_949)), "59.9 s");
        assert_eq!(duration(&run(60_000)), "1 min 0 s");
        assert_eq!(duration(&run(3_600_000 + 120_000)), "1 h 2 min");
        assert_eq!(
            duration(&json!({"started_at": "2026-02-01T09:00:00Z"})),
            "-"
        );
    }

    #[test]
    fn times_are_rfc_3339_or_a_time_ago() {
        assert_eq!(
            parse_time("2026-12-01T10:00:00+01:00").unwrap(),
            "2026-12-01T09:00:00.000Z"
        );
        let ago = |text: &str| {
            let time = parse_time(text).unwrap().parse::<DateTime<Utc>>().unwrap();
            (Utc::now() - time).num_seconds()
        };
        assert!((89..=91).contains(&ago("90s")));
        assert!((899..=901).contains(&ago("15m")));
        assert!((7_199..=7_201).contains(&ago("2h")));
        assert!((604_799..=604_801).contains(&ago("7d")));
        assert!((0..=1).contains(&ago("0s")));
        for bad in ["", "h", "2w", "-2h", "2.5h", "yesterday", "2026-12-01"] {
            let error = parse_time(bad).unwrap_err();
            assert!(error.contains("RFC 3339"), "{bad}: {error}");
        }
        assert!(
            parse_time("99999999d")
                .unwrap_err()
                .contains("too long ago")
        );
    }

    #[test]
    fn targets_are_type_slash_name() {
        let target = parse_target("computation/month-window").unwrap();
        assert_eq!(target.def_type, DefinitionType::Computation);
        assert_eq!(target.name, "month-window");
        assert!(parse_target("computation").is_err());
        assert!(parse_target("compute/x").is_err());
        assert!(parse_target("computation/Month").is_err());
        assert!(parse_target("computation/a/b").is_err());
    }
}
