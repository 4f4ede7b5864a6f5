//! `auto`: serve the runtime, check documents offline, and manage a playbook from the shell.
//!
//! Data goes to stdout, everything else to stderr. `--json` prints the API's JSON as it came.
//!
//! Each exit code has one meaning, [`EXIT_CODES`] says which, and `auto --help` prints it: an
//! error carries its code as the marker type it is wrapped in ([`UsageError`],
//! [`Unreachable`], [`InputError`]); an error without one is a failure on this machine
//! ([`EXIT_LOCAL`]).

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

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand};

/// The exit codes, as `auto --help` prints them.
pub const EXIT_CODES: &str = "Exit codes:
  0  Done.
  1  Refused: the server refused the request (its problem is printed), a run ended without
     success, or `auto check` or `auto apply` found issues in the documents.
  2  The command line is wrong: an unknown command or option, or a value found wrong before any
     request (such as --input that is not JSON, or a --url that is not a URL).
  3  The server cannot be reached, or its answer cannot be read.
  4  A file, folder or stdin the command line names cannot be read, or does not hold the JSON it
     should.
  5  A failure on this machine: `auto serve` or `auto mcp` cannot start (configuration, address,
     store) or stopped on an error.";

#[derive(Parser)]
#[command(
    name = "auto",
    version,
    about = "A durable runtime for AI playbooks.",
    after_help = EXIT_CODES
)]
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
        /// The org.
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
    /// Print the shell's completion script for `auto`, such as `source <(auto completion
    /// bash)` in ~/.bashrc.
    Completion {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
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
    /// The org of the playbook.
    #[arg(long, env = "AUTO_ORG")]
    pub org: String,
    /// The playbook.
    #[arg(long, env = "AUTO_PLAYBOOK")]
    pub playbook: String,
}

/// A file argument.
pub type FilePath = PathBuf;

/// Exit code of a request the server refused, a run that ended without success, or documents
/// with issues.
pub const EXIT_REFUSED: u8 = 1;
/// Exit code of a command line that is wrong before any request is made; clap uses it too.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a client command whose server cannot be reached.
pub const EXIT_UNREACHABLE: u8 = 3;
/// Exit code of a file, folder or stdin the command line names that cannot be read or does not
/// hold what it should.
pub const EXIT_INPUT: u8 = 4;
/// Exit code of a failure on this machine: a server that cannot start or stopped on an error.
pub const EXIT_LOCAL: u8 = 5;

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

/// A file, folder or stdin the command line names cannot be read, or does not hold the JSON it
/// should: exit [`EXIT_INPUT`].
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// The exit code of an error: by its marker, or [`EXIT_LOCAL`] for one without.
fn exit_code_of(error: &anyhow::Error) -> ExitCode {
    ExitCode::from(if error.downcast_ref::<UsageError>().is_some() {
        EXIT_USAGE
    } else if error.downcast_ref::<Unreachable>().is_some() {
        EXIT_UNREACHABLE
    } else if error.downcast_ref::<InputError>().is_some() {
        EXIT_INPUT
    } else {
        EXIT_LOCAL
    })
}

/// Transparent huge pages off for this process, before any thread starts.
///
/// Why: mimalloc asks the kernel for huge pages on the regions it maps (`madvise`), and a new
/// thread's heap then takes its first blocks from a fresh 2 MiB page that the kernel zeroes
/// whole on the first touch. A server just started grows threads with its first concurrent
/// requests, and in that first burst zeroing those pages was a third of its CPU
/// (`perf record` of the server: `clear_page_erms` under `do_huge_pmd_anonymous_page`), the
/// burst a quarter slower than the next. With ordinary pages only what is touched is zeroed.
/// The same advice databases give (Redis, MongoDB); mimalloc's own `MIMALLOC_ALLOW_THP=0`
/// does this, but only from the environment.
fn without_huge_pages() {
    #[cfg(target_os = "linux")]
    if let Err(error) = nix::sys::prctl::set_thp_disable(true) {
        // Best effort: with huge pages the server is as correct, its first burst slower.
        eprintln!("warning: transparent huge pages stay on for this process: {error}");
    }
}

fn main() -> ExitCode {
    without_huge_pages();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_LOCAL);
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
            Command::Completion { shell } => {
                // Written whole, so a reader that stops early (`| head`) is an error, not a
                // panic inside the generator.
                let mut script = Vec::new();
                clap_complete::generate(shell, &mut Cli::command(), "auto", &mut script);
                std::io::Write::write_all(&mut std::io::stdout(), &script)
                    .context("cannot write the completion script to stdout")?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument and option of every command, the global ones included, says what it is
    /// in `--help`.
    #[test]
    fn every_argument_has_help() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in command.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut command = Cli::command();
        command.build();
        let mut missing = Vec::new();
        walk(&command, "auto", &mut missing);
        assert!(
            missing.is_empty(),
            "arguments without help:\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn the_command_tree_is_sound() {
        Cli::command().debug_assert();
    }
}
