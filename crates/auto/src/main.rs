//! `auto`: serve the runtime, check documents offline, and manage a playbook from the shell.
//!
//! Data goes to stdout, everything else to stderr. `--json` prints the API's JSON as it came.
//!
//! The client commands exit 0 on success, 1 when the server refused the request (its problem
//! document is printed), 2 for a command line that is wrong before any request is made (as clap
//! does for its own errors: an unknown flag, input that is not JSON, a file that cannot be
//! read), and 3 when the server cannot be reached.

/// mimalloc rather than the C library's allocator: an expression's values, a run's events and a
/// request's JSON are many small blocks, and mimalloc takes a quarter off an expression that
/// filters a list (`cargo bench -p auto-script --bench eval`, which uses the same allocator).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod apply;
mod check;
mod client;
mod logs;
mod mcp;
mod requests;
mod runs;
mod serve;
mod tools;
mod traces;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "auto", version, about = "A durable runtime for AI playbooks.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the server.
    Serve(serve::ServeArgs),
    /// Check definition documents offline with the server's own checkers; exit 1 on any issue.
    Check(check::CheckArgs),
    /// Manage orgs.
    #[command(subcommand)]
    Org(client::OrgCommand),
    /// Manage playbooks.
    #[command(subcommand)]
    Playbook(client::PlaybookCommand),
    /// Create, update, read, list and retire definitions.
    #[command(subcommand)]
    Def(client::DefCommand),
    /// Sync a folder of definitions to a playbook: check them all, print the plan, apply it.
    #[command(after_help = apply::LAYOUT)]
    Apply(apply::ApplyArgs),
    /// Run a definition and print its output.
    Run(runs::RunArgs),
    /// Read, list, follow and cancel runs.
    #[command(subcommand)]
    Runs(runs::RunsCommand),
    /// List the playbook's inbox: the requests interaction functions left for people.
    Requests(requests::RequestsArgs),
    /// Answer an open request of the inbox; its run ends with the answer.
    Answer(requests::AnswerArgs),
    /// Publish, list and read the playbook's events.
    #[command(subcommand)]
    Events(client::EventsCommand),
    /// Search, show and call the tools of the tool servers set up for the playbook.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// List the models an org's reasoning functions may name, with their context windows.
    Models {
        #[arg(long, env = "AUTO_ORG")]
        org: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Remove a playbook's runs that ended before a time, with their events (admins only).
    Purge {
        #[command(flatten)]
        playbook: PlaybookArgs,
        /// RFC 3339, such as 2025-01-31T00:00:00Z; not in the future.
        #[arg(long)]
        ended_before: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Serve the MCP tools over stdio, for a local agent.
    Mcp(mcp::McpArgs),
    /// Keys for callers.
    #[command(subcommand)]
    Key(KeyCommand),
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Print a new key, and the hash to paste into a [[keys]] entry of auto.toml.
    New,
}

/// Where a client command reaches the server.
#[derive(Args, Clone, Debug)]
pub struct Remote {
    /// The server's base URL.
    #[arg(
        long,
        env = "AUTO_URL",
        default_value = "http://127.0.0.1:8040",
        global = true
    )]
    pub url: String,
    /// A bearer key; none for a server without keys.
    #[arg(long, env = "AUTO_KEY", hide_env_values = true, global = true)]
    pub key: Option<String>,
    /// Print the API's JSON instead of text for people.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The playbook a command acts on.
#[derive(Args, Clone, Debug)]
pub struct PlaybookArgs {
    #[arg(long, env = "AUTO_ORG")]
    pub org: String,
    #[arg(long, env = "AUTO_PLAYBOOK")]
    pub playbook: String,
}

/// A file argument.
pub type FilePath = PathBuf;

/// Exit code of a command line that is wrong before any request is made; clap uses it too.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a client command whose server cannot be reached.
pub const EXIT_UNREACHABLE: u8 = 3;

/// A command line that is wrong before any request is made: exit [`EXIT_USAGE`].
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The server could not be reached, or its answer could not be read: exit
/// [`EXIT_UNREACHABLE`].
#[derive(Debug)]
pub struct Unreachable(pub String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreachable {}

/// The exit code of an error: usage, unreachable, or 1 for anything else.
fn exit_code_of(error: &anyhow::Error) -> ExitCode {
    if error.downcast_ref::<UsageError>().is_some() {
        ExitCode::from(EXIT_USAGE)
    } else if error.downcast_ref::<Unreachable>().is_some() {
        ExitCode::from(EXIT_UNREACHABLE)
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve::run(args).await,
            Command::Apply(args) => apply::run(args).await,
            Command::Check(args) => check::run(args),
            Command::Org(command) => client::org(command).await,
            Command::Playbook(command) => client::playbook(command).await,
            Command::Def(command) => client::def(command).await,
            Command::Run(args) => runs::run(args).await,
            Command::Runs(command) => runs::runs(command).await,
            Command::Requests(args) => requests::requests(args).await,
            Command::Answer(args) => requests::answer(args).await,
            Command::Events(command) => client::events(command).await,
            Command::Tools(command) => tools::tools(command).await,
            Command::Models { org, remote } => client::models(org, remote).await,
            Command::Purge {
                playbook,
                ended_before,
                remote,
            } => client::purge(playbook, ended_before, remote).await,
            Command::Mcp(args) => mcp::run(args).await,
            Command::Key(KeyCommand::New) => {
                let (key, hash) = auto_server::auth::new_key();
                println!("key:  {key}");
                println!("hash: {hash}");
                eprintln!(
                    "Give the key to its caller; paste the hash into a [[keys]] entry of auto.toml."
                );
                Ok(ExitCode::SUCCESS)
            }
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            exit_code_of(&error)
        }
    }
}
