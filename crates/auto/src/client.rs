//! The client commands: each calls one operation over HTTP and prints its answer, for people
//! by default and as the API's JSON with `--json`. A problem document prints its detail and
//! issues, and the command exits 1; a command line found wrong before the request exits 2, a
//! server that cannot be reached 3, and a file or stdin named that cannot be read 4.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{InputError, PlaybookArgs, Remote, Unreachable, UsageError};

#[derive(Subcommand)]
pub enum OrgCommand {
    /// Create an org.
    Create {
        /// The org's id: a lowercase letter, then lowercase letters, digits and hyphens.
        id: String,
        /// A title for people.
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the orgs the key reaches.
    List {
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete an org and every playbook in it (admins only).
    Delete {
        /// The org's id.
        id: String,
        /// Delete even while runs are started, removing them as they are.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Subcommand)]
pub enum PlaybookCommand {
    /// Create a playbook in an org.
    Create {
        /// The playbook's id: a lowercase letter, then lowercase letters, digits and hyphens.
        id: String,
        /// The org.
        #[arg(long, env = "AUTO_ORG")]
        org: String,
        /// A title for people.
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List an org's playbooks.
    List {
        /// The org.
        #[arg(long, env = "AUTO_ORG")]
        org: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Delete a playbook with its definitions, runs, events and work (admins only).
    Delete {
        /// The playbook's id.
        id: String,
        /// The org.
        #[arg(long, env = "AUTO_ORG")]
        org: String,
        /// Delete even while runs are started, removing them as they are.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        remote: Remote,
    },
}

/// The document, overview and diagram of a save.
#[derive(clap::Args)]
pub struct SaveArgs {
    /// The document.
    #[arg(long)]
    file: PathBuf,
    /// A Markdown file with the overview.
    #[arg(long)]
    overview: Option<PathBuf>,
    /// A Mermaid file with the diagram; leave out for the word none.
    #[arg(long)]
    diagram: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum DefCommand {
    /// Check and save a new definition.
    Create {
        /// The type: reasoning, workflow, interaction, computation, recall or prediction.
        #[arg(value_name = "TYPE")]
        def_type: String,
        /// The definition's name.
        name: String,
        #[command(flatten)]
        save: SaveArgs,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Check and save the next version of a definition.
    Update {
        /// The type: reasoning, workflow, interaction, computation, recall or prediction.
        #[arg(value_name = "TYPE")]
        def_type: String,
        /// The definition's name.
        name: String,
        #[command(flatten)]
        save: SaveArgs,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Show a definition's latest version.
    Get {
        /// The type: reasoning, workflow, interaction, computation, recall or prediction.
        #[arg(value_name = "TYPE")]
        def_type: String,
        /// The definition's name.
        name: String,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the playbook's definitions.
    List {
        /// Only definitions of this type.
        #[arg(long = "type")]
        def_type: Option<String>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// List a definition's saved versions, oldest first.
    Versions {
        /// The definition's name.
        name: String,
        /// Its type; needed only when the playbook has definitions of this name in several
        /// types.
        #[arg(long = "type", value_name = "TYPE")]
        def_type: Option<String>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Print a unified diff of two saved versions' sources, from V1 to V2.
    Diff {
        /// The definition's name.
        name: String,
        /// The version to diff from, such as 1.
        #[arg(value_parser = clap::value_parser!(u32).range(1..))]
        v1: u32,
        /// The version to diff to, such as 2.
        #[arg(value_parser = clap::value_parser!(u32).range(1..))]
        v2: u32,
        /// Its type; needed only when the playbook has definitions of this name in several
        /// types.
        #[arg(long = "type", value_name = "TYPE")]
        def_type: Option<String>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Retire a definition.
    Retire {
        /// The type: reasoning, workflow, interaction, computation, recall or prediction.
        #[arg(value_name = "TYPE")]
        def_type: String,
        /// The definition's name.
        name: String,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Subcommand)]
pub enum EventsCommand {
    /// Publish an event: its type, and its data as JSON.
    Publish {
        /// The event's type, such as invoice.paid.
        #[arg(value_name = "TYPE")]
        event_type: String,
        /// The data, as JSON; the event has none when left out.
        #[arg(long)]
        data: Option<String>,
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
    /// List the playbook's events in order.
    List {
        /// Only the events of this run.
        #[arg(long)]
        run_id: Option<String>,
        /// Only events of this type.
        #[arg(long = "type")]
        event_type: Option<String>,
        /// The events after this seq, as the previous page's `more: --after SEQ` says.
        #[arg(long)]
        after: Option<String>,
        /// At most this many events.
        #[arg(long)]
        limit: Option<u32>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Show one event in full.
    Get {
        /// The event's id.
        id: String,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
}

pub(crate) struct Client {
    pub(crate) remote: Remote,
    http: reqwest::Client,
}

/// What the server answered: its status and its body, JSON when it was JSON.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
}

impl Answer {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

impl Client {
    pub(crate) fn new(remote: Remote) -> Self {
        Self {
            remote,
            http: reqwest::Client::new(),
        }
    }

    /// Sends one request. An error is a request that could not be made: a URL that is not one
    /// ([`UsageError`]) or a server that cannot be reached ([`Unreachable`]).
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Answer> {
        let url = format!("{}{path}", self.remote.url.trim_end_matches('/'));
        let mut request = self.http.request(method, &url);
        if let Some(key) = &self.remote.key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) if error.is_builder() => {
                return Err(error).context(UsageError(format!(
                    "--url {} is not a URL the client can use",
                    self.remote.url
                )));
            }
            Err(error) => {
                return Err(error).context(Unreachable(format!(
                    "cannot reach {url}; is `auto serve` running?"
                )));
            }
        };
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .context(Unreachable(format!("cannot read the answer from {url}")))?;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok(Answer { status, body })
    }

    /// Opens a server-sent events stream at `path`, resuming after `last_id` when given;
    /// `Ok(Err(problem))` is a rejection the server answered.
    pub(crate) async fn stream(
        &self,
        path: &str,
        last_id: Option<&str>,
    ) -> Result<Result<EventStream, Value>> {
        let url = format!("{}{path}", self.remote.url.trim_end_matches('/'));
        let mut request = self
            .http
            .get(&url)
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(key) = &self.remote.key {
            request = request.bearer_auth(key);
        }
        if let Some(id) = last_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.context(Unreachable(format!(
            "cannot reach {url}; is `auto serve` running?"
        )))?;
        if !response.status().is_success() {
            let text = response.text().await.unwrap_or_default();
            return Ok(Err(
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            ));
        }
        Ok(Ok(EventStream {
            response,
            buffer: Vec::new(),
            message: Message::default(),
        }))
    }

    /// Calls the API; `Ok(Err(problem))` is a rejection the server answered.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Result<Value, Value>> {
        let answer = self.send(method, path, body).await?;
        Ok(if answer.ok() {
            Ok(answer.body)
        } else {
            Err(answer.body)
        })
    }

    /// Calls and prints; the exit code says whether it succeeded.
    pub(crate) async fn print(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        human: fn(&Value),
    ) -> Result<ExitCode> {
        match self.call(method, path, body).await? {
            Ok(value) => {
                if self.remote.json {
                    println!("{}", serde_json::to_string_pretty(&value)?)
                } else {
                    human(&value)
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(problem) => self.refused(&problem),
        }
    }

    /// Prints a rejection, as JSON with `--json`; exit 1. A 401 also says what to do about
    /// the key, on stderr.
    pub(crate) fn refused(&self, problem: &Value) -> Result<ExitCode> {
        if self.remote.json {
            println!("{}", serde_json::to_string_pretty(problem)?);
        } else {
            print_problem(problem);
        }
        if problem["status"] == UNAUTHENTICATED {
            eprintln!("{}", key_hint(self.remote.key.is_some()));
        }
        Ok(ExitCode::FAILURE)
    }
}

/// The status of a request without a known key.
const UNAUTHENTICATED: u16 = 401;

/// What to do when the server asked for a key: give one, or give the right one.
fn key_hint(sent: bool) -> &'static str {
    if sent {
        "The server does not know the key sent: check AUTO_KEY or --key (the server's \
         operator makes keys with `auto key new`)."
    } else {
        "The server needs a key: set AUTO_KEY or pass --key (the server's operator makes keys \
         with `auto key new`)."
    }
}

pub(crate) fn print_problem(problem: &Value) {
    let (title, lines) = problem_lines(problem);
    eprintln!("error: {title}");
    for line in lines {
        eprintln!("  {line}");
    }
}

/// A problem document for people: its title, then its detail when it has no issues, and each
/// issue as `pointer: message`. An answer that is not a problem document (a proxy's page, say)
/// shows as its text.
pub(crate) fn problem_lines(problem: &Value) -> (String, Vec<String>) {
    if let Value::String(text) = problem {
        let text = text.trim();
        let lines = if text.is_empty() {
            vec![]
        } else {
            vec![text.to_owned()]
        };
        return ("The server refused the request".into(), lines);
    }
    let title = problem["title"]
        .as_str()
        .unwrap_or("The server refused the request")
        .to_owned();
    let issues = problem["issues"].as_array().cloned().unwrap_or_default();
    let mut lines = Vec::new();
    if issues.is_empty()
        && let Some(detail) = problem["detail"].as_str()
    {
        lines.push(detail.to_owned());
    }
    for issue in issues {
        lines.push(format!(
            "{}: {}",
            issue["pointer"].as_str().unwrap_or(""),
            issue["message"].as_str().unwrap_or("")
        ));
    }
    (title, lines)
}

pub(crate) fn pb_path(at: &PlaybookArgs) -> String {
    format!("/v1/orgs/{}/playbooks/{}", at.org, at.playbook)
}

fn read(path: &PathBuf) -> Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| InputError(format!("cannot read {}", path.display())))
}

fn save_body(save: &SaveArgs) -> Result<Value> {
    let mut body = json!({
        "source": read(&save.file)?,
        "diagram": match &save.diagram { Some(p) => read(p)?, None => "none".into() },
    });
    if let Some(path) = &save.overview {
        body["overview"] = Value::String(read(path)?);
    }
    Ok(body)
}

pub(crate) fn query(pairs: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", encode(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

pub(crate) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn print_org(v: &Value) {
    println!(
        "{}\t{}",
        v["id"].as_str().unwrap_or(""),
        v["title"].as_str().unwrap_or("")
    );
}

fn print_orgs(v: &Value) {
    v["orgs"]
        .as_array()
        .into_iter()
        .flatten()
        .for_each(print_org);
}

fn print_playbook(v: &Value) {
    println!(
        "{}/{}\t{}",
        v["org"].as_str().unwrap_or(""),
        v["id"].as_str().unwrap_or(""),
        v["title"].as_str().unwrap_or("")
    );
}

fn print_playbooks(v: &Value) {
    v["playbooks"]
        .as_array()
        .into_iter()
        .flatten()
        .for_each(print_playbook);
}

fn print_definition_line(v: &Value) {
    println!(
        "{}/{}\tv{}\t{}\t{}",
        v["type"].as_str().unwrap_or(""),
        v["name"].as_str().unwrap_or(""),
        v["version"],
        v["status"].as_str().unwrap_or(""),
        v["description"].as_str().unwrap_or("")
    );
}

fn print_definition(v: &Value) {
    print_definition_line(v);
    for warning in v["warnings"].as_array().into_iter().flatten() {
        println!("warning: {}", warning.as_str().unwrap_or(""));
    }
    if let Some(overview) = v["overview"].as_str() {
        println!("\n{overview}");
    }
}

fn print_definitions(v: &Value) {
    v["definitions"]
        .as_array()
        .into_iter()
        .flatten()
        .for_each(print_definition_line);
}

/// What an event without data shows where its data would be.
pub(crate) const NO_DATA: &str = "(no data)";

/// An event on one line: seq, time, type, source, and its data as JSON, its size when the
/// listing left it out, or [`NO_DATA`].
fn print_event_line(v: &Value) {
    let data = if let Some(data) = v.get("data") {
        data.to_string()
    } else if let Some(bytes) = v["data_bytes"].as_u64() {
        format!("({bytes} bytes)")
    } else {
        NO_DATA.to_owned()
    };
    println!(
        "{}\t{}\t{}\t{}\t{}",
        v["seq"],
        v["time"].as_str().unwrap_or(""),
        v["type"].as_str().unwrap_or(""),
        v["source"].as_str().unwrap_or(""),
        data
    );
}

fn print_events(v: &Value) {
    v["events"]
        .as_array()
        .into_iter()
        .flatten()
        .for_each(print_event_line);
    if let Some(next) = v["next"].as_str() {
        eprintln!("more: --after {next}");
    }
}

fn print_event(v: &Value) {
    println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}

pub async fn org(command: OrgCommand) -> Result<ExitCode> {
    match command {
        OrgCommand::Create { id, title, remote } => {
            Client::new(remote)
                .print(
                    Method::POST,
                    "/v1/orgs",
                    Some(json!({"id": id, "title": title})),
                    print_org,
                )
                .await
        }
        OrgCommand::List { remote } => {
            Client::new(remote)
                .print(Method::GET, "/v1/orgs", None, print_orgs)
                .await
        }
        OrgCommand::Delete { id, force, remote } => {
            Client::new(remote)
                .print(
                    Method::DELETE,
                    &format!("/v1/orgs/{id}?force={force}"),
                    None,
                    print_deleted,
                )
                .await
        }
    }
}

/// `auto purge`: removes a playbook's runs that ended before a time, with their events.
pub async fn purge(
    playbook: PlaybookArgs,
    ended_before: String,
    remote: Remote,
) -> Result<ExitCode> {
    let path = format!(
        "/v1/orgs/{}/playbooks/{}/purge",
        playbook.org, playbook.playbook
    );
    Client::new(remote)
        .print(
            Method::POST,
            &path,
            Some(json!({"ended_before": ended_before})),
            |v| {
                println!(
                    "purged {} runs and {} events that ended before {}",
                    v["runs"],
                    v["events"],
                    v["ended_before"].as_str().unwrap_or("")
                );
            },
        )
        .await
}

fn print_deleted(v: &Value) {
    println!(
        "deleted {} playbooks, {} definitions, {} runs ({} started) and {} events",
        v["playbooks"], v["definitions"], v["runs"], v["started_runs"], v["events"]
    );
}

pub async fn playbook(command: PlaybookCommand) -> Result<ExitCode> {
    match command {
        PlaybookCommand::Create {
            id,
            org,
            title,
            remote,
        } => {
            let path = format!("/v1/orgs/{org}/playbooks");
            Client::new(remote)
                .print(
                    Method::POST,
                    &path,
                    Some(json!({"id": id, "title": title})),
                    print_playbook,
                )
                .await
        }
        PlaybookCommand::List { org, remote } => {
            Client::new(remote)
                .print(
                    Method::GET,
                    &format!("/v1/orgs/{org}/playbooks"),
                    None,
                    print_playbooks,
                )
                .await
        }
        PlaybookCommand::Delete {
            id,
            org,
            force,
            remote,
        } => {
            Client::new(remote)
                .print(
                    Method::DELETE,
                    &format!("/v1/orgs/{org}/playbooks/{id}?force={force}"),
                    None,
                    print_deleted,
                )
                .await
        }
    }
}

pub async fn def(command: DefCommand) -> Result<ExitCode> {
    match command {
        DefCommand::Create {
            def_type,
            name,
            save,
            at,
            remote,
        } => {
            let mut body = save_body(&save)?;
            body["type"] = json!(def_type);
            body["name"] = json!(name);
            let path = format!("{}/definitions", pb_path(&at));
            Client::new(remote)
                .print(Method::POST, &path, Some(body), print_definition)
                .await
        }
        DefCommand::Update {
            def_type,
            name,
            save,
            at,
            remote,
        } => {
            let path = format!("{}/definitions/{def_type}/{name}", pb_path(&at));
            Client::new(remote)
                .print(
                    Method::PUT,
                    &path,
                    Some(save_body(&save)?),
                    print_definition,
                )
                .await
        }
        DefCommand::Get {
            def_type,
            name,
            at,
            remote,
        } => {
            let path = format!("{}/definitions/{def_type}/{name}", pb_path(&at));
            Client::new(remote)
                .print(Method::GET, &path, None, print_definition)
                .await
        }
        DefCommand::List {
            def_type,
            at,
            remote,
        } => {
            let path = format!(
                "{}/definitions{}",
                pb_path(&at),
                query(&[("type", def_type)])
            );
            Client::new(remote)
                .print(Method::GET, &path, None, print_definitions)
                .await
        }
        DefCommand::Versions {
            name,
            def_type,
            at,
            remote,
        } => {
            let client = Client::new(remote);
            let def_type = match type_given_or_found(&client, &at, &name, def_type).await? {
                Ok(def_type) => def_type,
                Err(problem) => return client.refused(&problem),
            };
            let path = format!(
                "{}/definitions/{}/{}/versions",
                pb_path(&at),
                encode(&def_type),
                encode(&name)
            );
            client.print(Method::GET, &path, None, print_versions).await
        }
        DefCommand::Diff {
            name,
            v1,
            v2,
            def_type,
            at,
            remote,
        } => {
            let client = Client::new(remote);
            let def_type = match type_given_or_found(&client, &at, &name, def_type).await? {
                Ok(def_type) => def_type,
                Err(problem) => return client.refused(&problem),
            };
            let mut sources = Vec::new();
            for version in [v1, v2] {
                let path = format!(
                    "{}/definitions/{}/{}?version={version}",
                    pb_path(&at),
                    encode(&def_type),
                    encode(&name)
                );
                match client.call(Method::GET, &path, None).await? {
                    Ok(found) => sources.push(found["source"].as_str().unwrap_or("").to_owned()),
                    Err(problem) => return client.refused(&problem),
                }
            }
            let label = |v: u32| format!("{def_type}/{name} v{v}");
            let diff = similar::TextDiff::from_lines(&sources[0], &sources[1])
                .unified_diff()
                .context_radius(3)
                .header(&label(v1), &label(v2))
                .to_string();
            if client.remote.json {
                let answer = json!({
                    "type": def_type, "name": name, "from": v1, "to": v2, "diff": diff,
                });
                println!("{}", serde_json::to_string_pretty(&answer)?);
            } else if diff.is_empty() {
                eprintln!("{} and v{v2} have the same source.", label(v1));
            } else {
                print!("{diff}");
            }
            Ok(ExitCode::SUCCESS)
        }
        DefCommand::Retire {
            def_type,
            name,
            at,
            remote,
        } => {
            let path = format!("{}/definitions/{def_type}/{name}", pb_path(&at));
            Client::new(remote)
                .print(Method::DELETE, &path, None, print_definition)
                .await
        }
    }
}

/// The type of the playbook's definition `name`, for a command that names no `--type`:
/// `Ok(Err(problem))` when it has none of that name. Several types with it is a wrong command
/// line: `--type` says which.
/// The type `--type` gave, or else the one type the playbook has a definition `name` of.
async fn type_given_or_found(
    client: &Client,
    at: &PlaybookArgs,
    name: &str,
    given: Option<String>,
) -> Result<Result<String, Value>> {
    match given {
        Some(def_type) => Ok(Ok(def_type)),
        None => type_of(client, at, name).await,
    }
}

async fn type_of(client: &Client, at: &PlaybookArgs, name: &str) -> Result<Result<String, Value>> {
    let listed = match client
        .call(Method::GET, &format!("{}/definitions", pb_path(at)), None)
        .await?
    {
        Ok(listed) => listed,
        Err(problem) => return Ok(Err(problem)),
    };
    let types: Vec<String> = listed["definitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["name"] == name)
        .filter_map(|d| d["type"].as_str().map(str::to_owned))
        .collect();
    match types.as_slice() {
        [one] => Ok(Ok(one.clone())),
        [] => Ok(Err(json!({
            "title": "Not found",
            "status": 404,
            "reason": "not_found",
            "detail": format!("The playbook {} has no definition {name}.", at.playbook),
        }))),
        several => Err(UsageError(format!(
            "the playbook {} has definitions named {name} of the types {}: pass --type",
            at.playbook,
            several.join(", ")
        ))
        .into()),
    }
}

/// `list_definition_versions` as a table: version, status, when it was saved, description.
fn print_versions(v: &Value) {
    for version in v["versions"].as_array().into_iter().flatten() {
        println!(
            "v{}\t{}\t{}\t{}",
            version["version"],
            version["status"].as_str().unwrap_or(""),
            version["created_at"].as_str().unwrap_or(""),
            version["description"].as_str().unwrap_or("")
        );
    }
}

/// `list_models`: the models an org's reasoning functions may name.
pub async fn models(org: String, remote: Remote) -> Result<ExitCode> {
    Client::new(remote)
        .print(
            Method::GET,
            &format!("/v1/orgs/{}/models", encode(&org)),
            None,
            print_models,
        )
        .await
}

fn print_models(v: &Value) {
    let number = |n: &Value| n.as_u64().map_or("-".to_owned(), |n| n.to_string());
    for model in v["models"].as_array().into_iter().flatten() {
        let alias = model["alias_of"]
            .as_str()
            .map(|of| format!("  (alias of {of})"))
            .unwrap_or_default();
        println!(
            "{}  context {}  output {}{alias}",
            model["id"].as_str().unwrap_or_default(),
            number(&model["context_window"]),
            number(&model["max_output_tokens"]),
        );
    }
    let providers: Vec<&str> = v["providers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if providers.is_empty() {
        println!("no provider is configured: add [providers.NAME] to auto.toml");
    } else {
        println!("providers: {}", providers.join(", "));
    }
    if let Some(allowed) = v["allowed"].as_array() {
        let allowed: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        println!("allowed: {}", allowed.join(", "));
    }
}

pub async fn events(command: EventsCommand) -> Result<ExitCode> {
    match command {
        EventsCommand::Publish {
            event_type,
            data,
            source,
            subject,
            at,
            remote,
        } => {
            let mut body = json!({"type": event_type});
            if let Some(data) = data {
                body["data"] = parse_json(&data, "--data")?;
            }
            if let Some(source) = source {
                body["source"] = json!(source);
            }
            if let Some(subject) = subject {
                body["subject"] = json!(subject);
            }
            let path = format!("{}/events", pb_path(&at));
            Client::new(remote)
                .print(Method::POST, &path, Some(body), print_event_line)
                .await
        }
        EventsCommand::List {
            run_id,
            event_type,
            after,
            limit,
            at,
            remote,
        } => {
            let q = query(&[
                ("run_id", run_id),
                ("type", event_type),
                ("after", after),
                ("limit", limit.map(|l| l.to_string())),
            ]);
            let path = format!("{}/events{q}", pb_path(&at));
            Client::new(remote)
                .print(Method::GET, &path, None, print_events)
                .await
        }
        EventsCommand::Get { id, at, remote } => {
            let path = format!("{}/events/{}", pb_path(&at), encode(&id));
            Client::new(remote)
                .print(Method::GET, &path, None, print_event)
                .await
        }
    }
}

/// Parses JSON an argument gave, or says where it is not JSON: `what is not JSON: line 1,
/// column 9: expected value` (exit 2).
pub(crate) fn parse_json(text: &str, what: &str) -> Result<Value> {
    json_of(text, what).map_err(|message| UsageError(message).into())
}

/// JSON given as an argument (`what`): the JSON itself (a wrong one exits 2), `@FILE` for a
/// file's or `-` for stdin's (one that cannot be read or is not JSON exits 4).
pub(crate) fn json_argument(text: &str, what: &str) -> Result<Value> {
    let (read, named) = if text == "-" {
        let read = std::io::read_to_string(std::io::stdin())
            .context(InputError(format!("cannot read {what} from stdin")))?;
        (read, format!("{what} - (stdin)"))
    } else if let Some(path) = text.strip_prefix('@') {
        let read = std::fs::read_to_string(path)
            .context(InputError(format!("cannot read {what} @{path}")))?;
        (read, format!("{what} @{path}"))
    } else {
        return parse_json(text, what);
    };
    json_of(&read, &named).map_err(|message| InputError(message).into())
}

/// The JSON of `text`, or what is wrong with it.
fn json_of(text: &str, what: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Err(format!("{what} is empty; it takes JSON, such as {{}}"));
    }
    serde_json::from_str(text).map_err(|error| {
        let message = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        let message = message.strip_suffix(&suffix).unwrap_or(&message);
        format!(
            "{what} is not JSON: line {}, column {}: {message}",
            error.line(),
            error.column()
        )
    })
}

/// One message of a server-sent events stream.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Message {
    pub(crate) id: Option<String>,
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

/// A server-sent events stream, read message by message as its bytes arrive.
pub(crate) struct EventStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
    message: Message,
}

impl EventStream {
    /// The next message; `None` when the server ended the stream or it broke off.
    pub(crate) async fn next(&mut self) -> Option<Message> {
        loop {
            while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(message) =
                    read_line(&mut self.message, line.trim_end_matches(['\n', '\r']))
                {
                    return Some(message);
                }
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.buffer.extend_from_slice(&bytes),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}

/// Reads one line of the stream into `message`; a blank line ends it and gives it, when it
/// holds data (the format of the WHATWG's HTML standard, "Server-sent events").
fn read_line(message: &mut Message, line: &str) -> Option<Message> {
    if line.is_empty() {
        let done = std::mem::take(message);
        return (!done.data.is_empty()).then(|| Message {
            data: done
                .data
                .strip_suffix('\n')
                .unwrap_or(&done.data)
                .to_owned(),
            ..done
        });
    }
    if line.starts_with(':') {
        return None;
    }
    let (field, value) = line.split_once(':').unwrap_or((line, ""));
    let value = value.strip_prefix(' ').unwrap_or(value);
    match field {
        "id" => message.id = Some(value.to_owned()),
        "event" => message.event = Some(value.to_owned()),
        "data" => {
            message.data.push_str(value);
            message.data.push('\n');
        }
        _ => {}
    }
    None
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    fn read(text: &str) -> Vec<Message> {
        let mut message = Message::default();
        text.split('\n')
            .filter_map(|line| read_line(&mut message, line.trim_end_matches('\r')))
            .collect()
    }

    #[test]
    fn messages_are_read_with_their_id_type_and_data() {
        let messages = read(
            ": keep-alive\n\nid: 7\nevent: run_started\ndata: {\"a\":1}\n\nid:8\r\ndata: one\r\ndata: two\r\n\r\n",
        );
        assert_eq!(
            messages,
            [
                Message {
                    id: Some("7".into()),
                    event: Some("run_started".into()),
                    data: "{\"a\":1}".into(),
                },
                Message {
                    id: Some("8".into()),
                    event: None,
                    data: "one\ntwo".into(),
                },
            ]
        );
    }

    #[test]
    fn a_message_without_data_or_not_ended_gives_nothing() {
        assert!(read("id: 3\nevent: x\n\n").is_empty());
        assert!(read("id: 3\ndata: x").is_empty());
    }
}
