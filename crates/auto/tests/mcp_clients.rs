//! The runtime's MCP server driven by the MCP project's own clients, as users' agents reach it:
//! the official Python SDK (over Streamable HTTP at `/mcp` with a bearer key, at a playbook's
//! endpoint, and over stdio through `auto mcp`) and the Inspector's CLI. Each lists the tools,
//! saves a computation function and a workflow, runs them, follows the workflow to its end with
//! `get_run`, and reads a rejection as a tool result with `isError` whose text is the problem.
//! Each also lists the format guides as resources and reads one, lists the prompts and gets
//! one with arguments.
//!
//! The clients come from `scripts/mcp-python` (`AUTO_MCP_PYTHON`) and `scripts/mcp-inspector`
//! (`AUTO_MCP_INSPECTOR`); without them the tests skip with a note, and under CI they fail.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use common::wait_for_blocking;
use serde_json::{Value, json};

/// The longest a client may take to answer one request: a Python start and connect included.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a workflow that waits one second may take to end.
const WORKFLOW_END_TIMEOUT: Duration = Duration::from_secs(30);

/// A function of the playbook: how many days a month has.
const DAYS: &str = include_str!("data/days-in-a-month-checked.md");

/// A workflow that waits a second, so its run answers `started`, then calls `days`.
const LATER: &str = include_str!("data/wait-then-count-the-days-of-the-month.yaml");

/// A computation whose front matter has a field no function takes.
const BAD: &str = include_str!("data/computation-with-an-unknown-field.md");

/// The official MCP Python SDK as a client, one session for a whole test, driven one JSON
/// line at a time (`tests/mcp-clients/python_client.py`).
struct PythonClient {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Drop for PythonClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PythonClient {
    fn start(python: &Path, args: &[&str]) -> PythonClient {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-clients/python_client.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{} cannot start: {e}", python.display()));
        let stdin = child.stdin.take().expect("its stdin");
        let stdout = child.stdout.take().expect("its stdout");
        let (sender, answers) = std::sync::mpsc::channel();
        // A thread reads the answers, so a client that hangs fails the test at a deadline.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        let mut client = PythonClient {
            child,
            stdin,
            answers,
        };
        let connected = client.next_answer();
        assert!(connected.get("connected").is_some(), "{connected:#}");
        assert_eq!(connected["connected"]["server_name"], json!("auto"));
        assert_eq!(
            connected["connected"]["server_title"],
            json!("auto: durable runtime for AI playbooks")
        );
        let instructions = connected["connected"]["instructions"].as_str().unwrap();
        assert!(
            instructions.contains("auto://docs/reasoning-format"),
            "{instructions}"
        );
        client
    }

    fn next_answer(&mut self) -> Value {
        match self.answers.recv_timeout(ANSWER_TIMEOUT) {
            Ok(line) => serde_json::from_str(&line).expect("the client writes JSON lines"),
            Err(RecvTimeoutError::Timeout) => panic!("the Python client did not answer in time"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the Python client ended: {:?}", self.child.try_wait())
            }
        }
    }

    fn request(&mut self, request: Value) -> Value {
        let answer = self.answer(&request);
        assert!(answer.get("error").is_none(), "{request}: {answer:#}");
        answer
    }

    /// The SDK's words for a request the server refused with a JSON-RPC error.
    fn refused(&mut self, request: Value) -> String {
        let answer = self.answer(&request);
        answer["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{request} was not refused: {answer:#}"))
            .to_owned()
    }

    fn answer(&mut self, request: &Value) -> Value {
        writeln!(self.stdin, "{request}").expect("the client reads its requests");
        self.stdin.flush().expect("flushed");
        self.next_answer()
    }
}

/// One way to reach a playbook through MCP: a client, and the org and playbook arguments the
/// endpoint wants (none at a playbook's own endpoint).
struct Session {
    client: PythonClient,
    scope: Option<(&'static str, &'static str)>,
}

impl Session {
    fn tools(&mut self) -> Vec<Value> {
        let answer = self.client.request(json!({"list_tools": {}}));
        answer["tools"].as_array().expect("tools").clone()
    }

    /// A call's answer: `{is_error, structured_content, texts}`.
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let mut arguments = arguments;
        if let Some((org, playbook)) = self.scope {
            arguments["org"] = json!(org);
            arguments["playbook"] = json!(playbook);
        }
        self.client
            .request(json!({"call": name, "arguments": arguments}))
    }

    /// The structured content of a call that succeeded.
    fn ok(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.call(name, arguments);
        assert_eq!(answer["is_error"], json!(false), "{name}: {answer:#}");
        answer["structured_content"].clone()
    }
}

/// The problem document a rejected call carries as its text.
fn problem_of(answer: &Value, status: u16, reason: &str) -> Value {
    assert_eq!(answer["is_error"], json!(true), "{answer:#}");
    assert_eq!(answer["structured_content"], Value::Null, "{answer:#}");
    let text = answer["texts"][0].as_str().expect("a text block");
    let problem: Value = serde_json::from_str(text).expect("the text is a problem document");
    assert_eq!(problem["status"], json!(status), "{problem:#}");
    assert_eq!(problem["reason"], json!(reason), "{problem:#}");
    assert!(
        problem["type"]
            .as_str()
            .is_some_and(|t| t == format!("https://on.auto/problems/{reason}")),
        "{problem:#}"
    );
    problem
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// The tools an endpoint lists: the names, the read-only hints, and whether they take the org
/// and the playbook.
fn check_tools(tools: &[Value], scoped: bool) {
    for (name, read_only) in [
        ("create_definition", false),
        ("run_definition", false),
        ("get_run", true),
        ("list_runs", true),
        ("get_definition", true),
        ("list_definitions", true),
        ("cancel_run", false),
    ] {
        let tool = tool(tools, name);
        assert_eq!(tool["read_only"], json!(read_only), "{name}: {tool:#}");
        assert_eq!(tool["output_schema"]["type"], json!("object"), "{name}");
        let takes_org = tool["input_schema"]["properties"].get("org").is_some();
        assert_eq!(takes_org, !scoped, "{name}: {tool:#}");
    }
    let create_org = tools.iter().any(|t| t["name"] == "create_org");
    assert_eq!(
        create_org, !scoped,
        "create_org is the server endpoint's only"
    );
    let required = &tool(tools, "create_definition")["input_schema"]["required"];
    for field in ["type", "name", "source", "diagram"] {
        assert!(
            required.as_array().unwrap().contains(&json!(field)),
            "{field}"
        );
    }
}

/// The format guides as resources and the prompts, as an agent reads them through the SDK.
fn check_guides_and_prompts(session: &mut Session, scoped: bool) {
    let listed = session.client.request(json!({"list_resources": {}}));
    let resources = listed["resources"].as_array().expect("resources");
    let uris: Vec<&str> = resources.iter().filter_map(|r| r["uri"].as_str()).collect();
    for uri in [
        "auto://docs/reasoning-format",
        "auto://docs/workflow-format",
        "auto://docs/output-shapes",
    ] {
        assert!(uris.contains(&uri), "{uri}: {listed:#}");
    }
    let workflow = resources
        .iter()
        .find(|r| r["uri"] == "auto://docs/workflow-format")
        .unwrap();
    assert_eq!(workflow["mimeType"], json!("text/markdown"), "{workflow:#}");
    assert_eq!(workflow["title"], json!("auto: the workflow format"));
    let read = session
        .client
        .request(json!({"read_resource": "auto://docs/workflow-format"}));
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], json!("text/markdown"), "{read:#}");
    let text = contents["text"].as_str().expect("the guide's text");
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/definitions/workflow.md"),
    )
    .expect("the guide");
    assert_eq!(text, guide);
    let missing = session
        .client
        .refused(json!({"read_resource": "auto://docs/nope"}));
    assert!(
        missing.contains("There is no resource auto://docs/nope"),
        "{missing}"
    );

    let listed = session.client.request(json!({"list_prompts": {}}));
    let names: Vec<&str> = listed["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["write_reasoning_function", "write_workflow"]);
    let prompt = session.client.request(json!({
        "get_prompt": "write_reasoning_function",
        "arguments": {"purpose": "say how many days a month has", "name": "days-said"},
    }));
    let messages = prompt["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], json!("user"));
    let embedded = &messages[0]["content"]["resource"];
    assert_eq!(
        embedded["uri"],
        json!("auto://docs/reasoning-format"),
        "{prompt:#}"
    );
    assert!(
        embedded["text"]
            .as_str()
            .unwrap()
            .starts_with("# Reasoning functions")
    );
    let steps = messages[1]["content"]["text"].as_str().expect("the steps");
    assert!(steps.contains("say how many days a month has"), "{steps}");
    assert!(
        steps.contains("check_definition: type reasoning, name days-said"),
        "{steps}"
    );
    assert_eq!(steps.contains("take no org or playbook"), scoped, "{steps}");
    let refused = session.client.refused(json!({
        "get_prompt": "write_workflow", "arguments": {"name": "no-purpose"},
    }));
    assert!(
        refused.contains("The prompt write_workflow needs purpose"),
        "{refused}"
    );
}

/// Reads the run with `get_run` until it has ended.
fn ended(session: &mut Session, run_id: &str) -> Value {
    wait_for_blocking(WORKFLOW_END_TIMEOUT, "the run's end", || {
        let run = session.ok("get_run", json!({"run_id": run_id}));
        (run["status"] != "started").then_some(run)
    })
}

/// The scenario every transport runs, on a playbook that exists: save, run, follow, refuse.
fn save_run_and_refuse(session: &mut Session) {
    let days = session.ok(
        "create_definition",
        json!({"type": "computation", "name": "days", "source": DAYS,
               "diagram": "flowchart LR\n  month --> days"}),
    );
    assert_eq!(days["version"], json!(1), "{days:#}");
    assert_eq!(days["status"], json!("active"));
    assert_eq!(days["input_schema"]["required"], json!(["month"]));

    let run = session.ok(
        "run_definition",
        json!({"type": "computation", "name": "days", "input": {"month": "2024-02"},
               "run_id": "feb-2024"}),
    );
    assert_eq!(run["status"], json!("succeeded"), "{run:#}");
    assert_eq!(run["output"], json!({"days": 29}));

    let later = session.ok(
        "create_definition",
        json!({"type": "workflow", "name": "later", "source": LATER, "diagram": "none"}),
    );
    assert_eq!(later["version"], json!(1), "{later:#}");
    let started = session.ok(
        "run_definition",
        json!({"type": "workflow", "name": "later", "input": {"month": "2026-02"}}),
    );
    assert_eq!(started["status"], json!("started"), "{started:#}");
    let run_id = started["run_id"].as_str().expect("a run id").to_owned();
    let run = ended(session, &run_id);
    assert_eq!(run["status"], json!("succeeded"), "{run:#}");
    assert_eq!(run["output"], json!({"month": "2026-02", "days": 28}));

    let read = session.ok("get_run", json!({"run_id": "feb-2024"}));
    assert_eq!(read["input"], json!({"month": "2024-02"}));
    assert_eq!(read["output"], json!({"days": 29}));
    let listed = session.ok("list_runs", json!({"type": "workflow", "limit": 5}));
    assert_eq!(listed["runs"][0]["run_id"], json!(run_id), "{listed:#}");

    // A document the checker refuses: the problem names the line and the field.
    let refused = session.call(
        "create_definition",
        json!({"type": "computation", "name": "bad", "source": BAD, "diagram": "none"}),
    );
    let problem = problem_of(&refused, 422, "invalid_input");
    let issue = &problem["issues"][0];
    assert_eq!(issue["pointer"], json!("/source"), "{problem:#}");
    assert_eq!(issue["line"], json!(3), "{problem:#}");
    // An input the function refuses, and a function that does not exist.
    let refused = session.call(
        "run_definition",
        json!({"type": "computation", "name": "days", "input": {"month": 202402}}),
    );
    problem_of(&refused, 422, "invalid_input");
    let missing = session.call(
        "get_definition",
        json!({"type": "workflow", "name": "nope"}),
    );
    problem_of(&missing, 404, "not_found");
}

/// Creates the playbook `main` of `acme` through the server endpoint's tool, which takes the
/// org but names the new playbook by `id`.
fn create_playbook(session: &mut Session) {
    let playbook = session
        .client
        .request(json!({"call": "create_playbook", "arguments": {"org": "acme", "id": "main"}}));
    assert_eq!(
        playbook["structured_content"]["id"],
        json!("main"),
        "{playbook:#}"
    );
}

fn key_config(hash: &str) -> String {
    format!("[[keys]]\ncaller = \"agent\"\norg = \"acme\"\nrole = \"admin\"\nhash = \"{hash}\"\n")
}

#[test]
fn the_python_sdk_works_the_server_endpoint_over_http_with_a_key() {
    let Some(python) = auto_testkit::mcp_python() else {
        return;
    };
    let (key, hash) = auto_server::auth::new_key();
    let server = common::serve_with_config(&key_config(&hash));
    let url = format!("{}/mcp", server.url);
    let mut session = Session {
        client: PythonClient::start(&python, &["http", &url, &key]),
        scope: Some(("acme", "main")),
    };
    check_tools(&session.tools(), false);
    check_guides_and_prompts(&mut session, false);
    let org = session
        .client
        .request(json!({"call": "create_org", "arguments": {"id": "acme", "title": "Acme"}}));
    assert_eq!(org["structured_content"]["id"], json!("acme"), "{org:#}");
    create_playbook(&mut session);
    save_run_and_refuse(&mut session);

    // The key reaches its own org only: another org is forbidden, as over HTTP.
    let other = session
        .client
        .request(json!({"call": "create_org", "arguments": {"id": "other"}}));
    problem_of(&other, 403, "forbidden");
}

#[test]
fn the_python_sdk_is_refused_without_a_known_key() {
    let Some(python) = auto_testkit::mcp_python() else {
        return;
    };
    let (_key, hash) = auto_server::auth::new_key();
    let server = common::serve_with_config(&key_config(&hash));
    let url = format!("{}/mcp", server.url);
    let output = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-clients/python_client.py"))
        .args(["http", &url, "auto_not-a-key"])
        .stdin(Stdio::null())
        .output()
        .expect("the client runs");
    assert!(!output.status.success(), "connected without a known key");
    let answer: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}{}", common::stdout(&output), common::stderr(&output)));
    assert!(answer.get("connect_error").is_some(), "{answer:#}");
    // Every request was refused at the HTTP layer, before MCP saw it: 401, kind
    // `unauthenticated`, as the API refuses an unknown key.
    let statuses = answer["http_statuses"].as_array().expect("statuses");
    assert!(!statuses.is_empty(), "{answer:#}");
    assert!(statuses.iter().all(|status| status == 401), "{answer:#}");
}

#[test]
fn the_python_sdk_works_a_playbooks_own_endpoint() {
    let Some(python) = auto_testkit::mcp_python() else {
        return;
    };
    let server = common::serve();
    for args in [
        &["org", "create", "acme"][..],
        &["playbook", "create", "main"],
    ] {
        let output = common::auto(&server, args);
        assert!(output.status.success(), "{}", common::stderr(&output));
    }
    let url = format!("{}/v1/orgs/acme/playbooks/main/mcp", server.url);
    let mut session = Session {
        client: PythonClient::start(&python, &["http", &url]),
        scope: None,
    };
    check_tools(&session.tools(), true);
    check_guides_and_prompts(&mut session, true);
    save_run_and_refuse(&mut session);
    // The playbook comes from the endpoint: an argument naming another is refused.
    let refused = session.call("list_runs", json!({"org": "other", "playbook": "x"}));
    let problem = problem_of(&refused, 422, "invalid_input");
    assert_eq!(
        problem["issues"][0]["pointer"],
        json!("/org"),
        "{problem:#}"
    );
}

#[test]
fn the_python_sdk_works_auto_mcp_over_stdio() {
    let Some(python) = auto_testkit::mcp_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a directory");
    let database = format!("sqlite://{}", dir.path().join("auto.db").display());
    let mut session = Session {
        client: PythonClient::start(
            &python,
            &["stdio", common::AUTO, "mcp", "--database", &database],
        ),
        scope: Some(("acme", "main")),
    };
    check_tools(&session.tools(), false);
    check_guides_and_prompts(&mut session, false);
    let org = session
        .client
        .request(json!({"call": "create_org", "arguments": {"id": "acme"}}));
    assert_eq!(org["is_error"], json!(false), "{org:#}");
    create_playbook(&mut session);
    save_run_and_refuse(&mut session);
}

/// The Inspector's CLI: one process a request, its answer as JSON on stdout.
struct Inspector {
    executable: PathBuf,
    url: String,
}

impl Inspector {
    fn run(&self, args: &[&str]) -> Value {
        let output = Command::new(&self.executable)
            .arg("--cli")
            .arg(&self.url)
            .args(["--transport", "http"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("the Inspector runs");
        assert!(
            output.status.success(),
            "{args:?}: {}{}",
            common::stdout(&output),
            common::stderr(&output)
        );
        serde_json::from_slice(&output.stdout).expect("the Inspector prints JSON")
    }

    /// `tools/call` with each argument as the CLI takes it, `key=value`.
    fn call(&self, name: &str, arguments: &[(&str, &str)]) -> Value {
        let mut args = vec!["--method", "tools/call", "--tool-name", name];
        let pairs: Vec<String> = arguments.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !pairs.is_empty() {
            args.push("--tool-arg");
            args.extend(pairs.iter().map(String::as_str));
        }
        self.run(&args)
    }

    fn ok(&self, name: &str, arguments: &[(&str, &str)]) -> Value {
        let result = self.call(name, arguments);
        assert_ne!(result["isError"], json!(true), "{name}: {result:#}");
        result["structuredContent"].clone()
    }
}

#[test]
fn the_inspector_cli_lists_saves_runs_and_reads_rejections() {
    let Some(executable) = auto_testkit::mcp_inspector() else {
        return;
    };
    let server = common::serve();
    let inspector = Inspector {
        executable,
        url: format!("{}/mcp", server.url),
    };
    let listed = inspector.run(&["--method", "tools/list"]);
    let tools = listed["tools"].as_array().expect("tools");
    for (name, read_only) in [
        ("create_definition", false),
        ("get_run", true),
        ("list_runs", true),
    ] {
        assert_eq!(
            tool(tools, name)["annotations"]["readOnlyHint"],
            json!(read_only),
            "{name}"
        );
    }

    assert_eq!(
        tool(tools, "run_definition")["title"],
        json!("auto: run a definition")
    );

    // The format guides and the prompts, as the Inspector shows them.
    let listed = inspector.run(&["--method", "resources/list"]);
    let resources = listed["resources"].as_array().expect("resources");
    let shapes = resources
        .iter()
        .find(|r| r["uri"] == "auto://docs/output-shapes")
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(shapes["mimeType"], json!("text/markdown"));
    assert_eq!(shapes["title"], json!("auto: the output shapes"));
    let read = inspector.run(&[
        "--method",
        "resources/read",
        "--uri",
        "auto://docs/reasoning-format",
    ]);
    let text = read["contents"][0]["text"].as_str().expect("the guide");
    assert!(text.starts_with("# Reasoning functions"), "{read:#}");
    assert!(text.contains("## The document"), "{read:#}");
    let listed = inspector.run(&["--method", "prompts/list"]);
    assert_eq!(
        listed["prompts"][1]["name"],
        json!("write_workflow"),
        "{listed:#}"
    );
    assert_eq!(
        listed["prompts"][1]["arguments"][0]["name"],
        json!("purpose")
    );
    let prompt = inspector.run(&[
        "--method",
        "prompts/get",
        "--prompt-name",
        "write_workflow",
        "--prompt-args",
        "purpose=count the days of two months",
        "functions=computation/days",
    ]);
    let messages = prompt["messages"].as_array().expect("messages");
    assert_eq!(
        messages[0]["content"]["resource"]["uri"],
        json!("auto://docs/workflow-format"),
        "{prompt:#}"
    );
    let steps = messages[1]["content"]["text"].as_str().expect("the steps");
    assert!(steps.contains("count the days of two months"), "{steps}");
    assert!(
        steps.contains("It should call: computation/days."),
        "{steps}"
    );
    assert!(steps.contains("takes org and playbook"), "{steps}");

    inspector.ok("create_org", &[("id", "acme")]);
    let pb = [("org", "acme"), ("playbook", "main")];
    inspector.ok("create_playbook", &[("org", "acme"), ("id", "main")]);
    let saved = inspector.ok(
        "create_definition",
        &[
            pb[0],
            pb[1],
            ("type", "computation"),
            ("name", "days"),
            ("source", DAYS),
            ("diagram", "none"),
        ],
    );
    assert_eq!(saved["version"], json!(1), "{saved:#}");
    let run = inspector.ok(
        "run_definition",
        &[
            pb[0],
            pb[1],
            ("type", "computation"),
            ("name", "days"),
            ("input", r#"{"month": "2024-02"}"#),
            ("run_id", "feb"),
        ],
    );
    assert_eq!(run["status"], json!("succeeded"), "{run:#}");
    assert_eq!(run["output"], json!({"days": 29}));

    inspector.ok(
        "create_definition",
        &[
            pb[0],
            pb[1],
            ("type", "workflow"),
            ("name", "later"),
            ("source", LATER),
            ("diagram", "none"),
        ],
    );
    let started = inspector.ok(
        "run_definition",
        &[
            pb[0],
            pb[1],
            ("type", "workflow"),
            ("name", "later"),
            ("input", r#"{"month": "2026-02"}"#),
            ("run_id", "later-1"),
        ],
    );
    assert_eq!(started["status"], json!("started"), "{started:#}");
    let run = wait_for_blocking(WORKFLOW_END_TIMEOUT, "the run's end", || {
        let run = inspector.ok("get_run", &[pb[0], pb[1], ("run_id", "later-1")]);
        (run["status"] != "started").then_some(run)
    });
    assert_eq!(
        run["output"],
        json!({"month": "2026-02", "days": 28}),
        "{run:#}"
    );

    let refused = inspector.call(
        "create_definition",
        &[
            pb[0],
            pb[1],
            ("type", "computation"),
            ("name", "bad"),
            ("source", BAD),
            ("diagram", "none"),
        ],
    );
    assert_eq!(refused["isError"], json!(true), "{refused:#}");
    let text = refused["content"][0]["text"]
        .as_str()
        .expect("a text block");
    let problem: Value = serde_json::from_str(text).expect("a problem document");
    assert_eq!(problem["reason"], json!("invalid_input"), "{problem:#}");
    assert_eq!(problem["issues"][0]["line"], json!(3), "{problem:#}");
}
