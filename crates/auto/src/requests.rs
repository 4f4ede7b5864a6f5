//! `auto requests` and `auto answer`: the playbook's inbox over `list_requests`, and an answer
//! over `answer_interaction`. The answer is JSON, `@FILE` or `-` for stdin, checked before any
//! request (exit 2 when the argument is wrong, 4 when its file or stdin is); a refused answer
//! prints the problem document and exits 1.

use std::process::ExitCode;

use anyhow::Result;
use auto_store::{REQUESTS_PAGE_MAX, RequestStatus};
use reqwest::Method;
use serde_json::{Value, json};

use crate::client::{Client, encode, json_argument, pb_path, query};
use crate::{PlaybookArgs, Remote};

fn statuses() -> Vec<&'static str> {
    RequestStatus::ALL.iter().map(|s| s.as_str()).collect()
}

#[derive(clap::Args)]
pub struct RequestsArgs {
    /// Only requests with this status: open, answered, expired, undelivered or cancelled.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(statuses()))]
    status: Option<String>,
    /// At most this many requests (the server's default is 50).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=REQUESTS_PAGE_MAX as i64))]
    limit: Option<u32>,
    /// The requests after this one, as the previous page's `more: --after ID` says.
    #[arg(long, value_name = "ID")]
    after: Option<String>,
    #[command(flatten)]
    at: PlaybookArgs,
    #[command(flatten)]
    remote: Remote,
}

#[derive(clap::Args)]
pub struct AnswerArgs {
    /// The request's id, as `auto requests` shows it.
    #[arg(value_name = "REQUEST_ID")]
    request_id: String,
    /// The answer: JSON, @FILE for a file of JSON, or - for stdin.
    #[arg(value_name = "JSON|@FILE|-")]
    answer: String,
    #[command(flatten)]
    at: PlaybookArgs,
    #[command(flatten)]
    remote: Remote,
}

/// The answer the argument gives: the JSON itself, a file's (`@FILE`) or stdin's (`-`).
fn read_answer(answer: &str) -> Result<Value> {
    json_argument(answer, "the answer")
}

pub async fn requests(args: RequestsArgs) -> Result<ExitCode> {
    let q = query(&[
        ("status", args.status),
        ("after", args.after),
        ("limit", args.limit.map(|l| l.to_string())),
    ]);
    let path = format!("{}/requests{q}", pb_path(&args.at));
    Client::new(args.remote)
        .print(Method::GET, &path, None, print_requests)
        .await
}

pub async fn answer(args: AnswerArgs) -> Result<ExitCode> {
    let answer = read_answer(&args.answer)?;
    let path = format!(
        "{}/requests/{}/answer",
        pb_path(&args.at),
        encode(&args.request_id)
    );
    Client::new(args.remote)
        .print(
            Method::POST,
            &path,
            Some(json!({ "answer": answer })),
            print_answered,
        )
        .await
}

fn print_answered(request: &Value) {
    println!(
        "The request {} is answered; its run {} ended with the answer.",
        request["request_id"].as_str().unwrap_or(""),
        request["run_id"].as_str().unwrap_or("")
    );
}

/// Each request: its id, status, who is asked, when it expires, then its message indented.
fn print_requests(list: &Value) {
    let requests = list["requests"].as_array().cloned().unwrap_or_default();
    if requests.is_empty() {
        eprintln!("no requests");
    }
    for request in &requests {
        let definition = &request["definition"];
        println!(
            "{}  {}  to {}  {}/{} v{}  expires {}",
            request["request_id"].as_str().unwrap_or(""),
            request["status"].as_str().unwrap_or(""),
            request["to"].as_str().unwrap_or(""),
            definition["type"].as_str().unwrap_or(""),
            definition["name"].as_str().unwrap_or(""),
            definition["version"],
            request["expires_at"].as_str().unwrap_or(""),
        );
        for line in request["message"].as_str().unwrap_or("").lines() {
            println!("    {line}");
        }
        if let Some(answer) = request.get("answer") {
            println!(
                "    answered by {}: {answer}",
                request["answered_by"].as_str().unwrap_or("")
            );
        }
    }
    if let Some(next) = list["next"].as_str() {
        eprintln!("more: --after {next}");
    }
}
