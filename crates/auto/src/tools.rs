//! `auto tools`: the tool-server operations (`search`, `introspect`, `execute` and `dry_run`)
//! for a person or an agent writing a reasoning function's `tools`: `auto tools search
//! [TERMS]`, `auto tools show SERVER TOOL`, `auto tools call SERVER TOOL [JSON|@FILE|-]
//! [--dry-run]`. The arguments are checked before any request (exit 2, or 4 for a file or
//! stdin); a refusal prints the problem document and exits 1.

use std::process::ExitCode;

use anyhow::Result;
use reqwest::Method;
use serde_json::{Value, json};

use crate::client::{Client, encode, json_argument, pb_path, query};
use crate::{InputError, PlaybookArgs, Remote, UsageError};

#[derive(clap::Subcommand)]
pub enum ToolsCommand {
    /// List the tool servers set up for the playbook and the tools each allows, best match of
    /// the terms first.
    Search {
        /// A few words describing what the function should do.
        terms: Vec<String>,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Show one tool in full, with the schema of its arguments.
    Show {
        /// The tool server, as `[tool_servers.NAME]` of auto.toml names it.
        server: String,
        /// The tool, as the server names it.
        tool: String,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
    /// Call one tool once, as a run would, and print what the run's model would see; the call
    /// is recorded in the playbook's history.
    Call {
        /// The tool server, as `[tool_servers.NAME]` of auto.toml names it.
        server: String,
        /// The tool, as the server names it.
        tool: String,
        /// The arguments: a JSON object, @FILE for a file of one, or - for stdin; {} when left
        /// out.
        #[arg(value_name = "JSON|@FILE|-")]
        arguments: Option<String>,
        /// Print what the call would check, and call nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        at: PlaybookArgs,
        #[command(flatten)]
        remote: Remote,
    },
}

pub async fn tools(command: ToolsCommand) -> Result<ExitCode> {
    match command {
        ToolsCommand::Search { terms, at, remote } => {
            let q = query(&[("terms", (!terms.is_empty()).then(|| terms.join(" ")))]);
            let path = format!("{}/tool-servers/search{q}", pb_path(&at));
            Client::new(remote)
                .print(Method::GET, &path, None, print_servers)
                .await
        }
        ToolsCommand::Show {
            server,
            tool,
            at,
            remote,
        } => {
            let path = format!(
                "{}/tool-servers/{}/tools/{}",
                pb_path(&at),
                encode(&server),
                encode(&tool)
            );
            Client::new(remote)
                .print(Method::GET, &path, None, print_tool)
                .await
        }
        ToolsCommand::Call {
            server,
            tool,
            arguments,
            dry_run,
            at,
            remote,
        } => {
            let arguments = match arguments {
                Some(text) => read_arguments(&text)?,
                None => json!({}),
            };
            let path = format!(
                "{}/tool-servers/{}/tools/{}/execute",
                pb_path(&at),
                encode(&server),
                encode(&tool)
            );
            Client::new(remote)
                .print(
                    Method::POST,
                    &path,
                    Some(json!({ "arguments": arguments, "dry_run": dry_run })),
                    print_call,
                )
                .await
        }
    }
}

/// The arguments the command line gives: JSON, a file's (`@FILE`) or stdin's (`-`); an object.
fn read_arguments(text: &str) -> Result<Value> {
    let value = json_argument(text, "the arguments")?;
    if !value.is_object() {
        let message = "the arguments must be a JSON object, such as {\"q\": \"x\"}".to_owned();
        // Wrong on the command line, or in the file or stdin it names.
        return Err(if text == "-" || text.starts_with('@') {
            InputError(message).into()
        } else {
            UsageError(message).into()
        });
    }
    Ok(value)
}

/// Each server, then its tools as `server/tool` (what `tools:` takes), read-only marked.
fn print_servers(list: &Value) {
    let servers = list["servers"].as_array().cloned().unwrap_or_default();
    if servers.is_empty() {
        eprintln!("no tool servers are set up for this playbook");
    }
    for server in &servers {
        let name = server["name"].as_str().unwrap_or("");
        match server.get("failure").filter(|f| !f.is_null()) {
            Some(failure) => println!(
                "{name} ({}): cannot list its tools now: {} ({})",
                server["transport"].as_str().unwrap_or(""),
                failure["detail"].as_str().unwrap_or(""),
                failure["because"].as_str().unwrap_or("")
            ),
            None => println!("{name} ({})", server["transport"].as_str().unwrap_or("")),
        }
        for tool in server["tools"].as_array().cloned().unwrap_or_default() {
            let read_only = if tool["read_only"] == true {
                "  read-only"
            } else {
                ""
            };
            println!(
                "  {name}/{}{read_only}  {}",
                tool["name"].as_str().unwrap_or(""),
                tool["description"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
            );
        }
    }
}

fn print_tool(tool: &Value) {
    println!(
        "{}/{}{}",
        tool["server"].as_str().unwrap_or(""),
        tool["name"].as_str().unwrap_or(""),
        if tool["read_only"] == true {
            "  read-only"
        } else {
            ""
        }
    );
    println!(
        "the model sees it as {}",
        tool["model_name"].as_str().unwrap_or("")
    );
    println!("{}", tool["description"].as_str().unwrap_or(""));
    println!(
        "arguments: {}",
        serde_json::to_string_pretty(&tool["input_schema"]).unwrap_or_default()
    );
    for warning in tool["warnings"].as_array().cloned().unwrap_or_default() {
        eprintln!("warning: {}", warning.as_str().unwrap_or(""));
    }
}

fn print_call(out: &Value) {
    for check in out["checks"].as_array().cloned().unwrap_or_default() {
        eprintln!(
            "{} {}",
            if check["passed"] == true {
                "ok  "
            } else {
                "FAIL"
            },
            check["detail"].as_str().unwrap_or("")
        );
    }
    if let Some(content) = out["content"].as_str() {
        if out["is_error"] == true {
            eprintln!("the tool answered an error:");
        }
        println!("{content}");
    }
}
