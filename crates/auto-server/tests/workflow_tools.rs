//! Workflows that call functions which call tools, end to end through HTTP: a tool-calling
//! reasoning function and a tool interaction called from a workflow, a tool-calling child
//! that ends `tools_unfinished` as the workflow sees it, and a computation stopped by its
//! 10-second bound under a workflow's call. The provider double answers the model, and the
//! testkit's scripted MCP server is the tool server.

mod common;

use std::time::{Duration, Instant};

use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use common::{TestServer, workflow};
use serde_json::{Value, json};

/// A reasoning function that may look things up in the graph.
const FINDER: &str = include_str!("data/find-with-the-graph.md");

/// An interaction that calls the tool `echo` once, which answers its arguments.
const ASK_ECHO: &str = include_str!("data/ask-the-echo-tool.md");

/// Finds, then asks the tool interaction with what was found.
const FIND_THEN_ASK: &str = include_str!("data/find-then-ask.yaml");

/// Finds, and hands on how the finder's run ended when it could not finish its tools.
const FIND_CAUGHT: &str = include_str!("data/find-with-errors-caught.yaml");

struct Setup {
    provider: ProviderDouble,
    mcp: McpDouble,
    server: TestServer,
    pb: String,
}

fn tool_call(id: &str, name: &str, arguments: Value) -> ScriptedToolCall {
    ScriptedToolCall {
        call_id: id.into(),
        name: name.into(),
        arguments,
    }
}

async fn setup() -> Setup {
    let provider = ProviderDouble::start(ProviderKind::Anthropic).await;
    let mcp = McpDouble::start().await;
    mcp.add_json_tool("echo", "Answers its arguments as JSON.", true);
    let config = format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n\n[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n",
        provider.base_url(),
        mcp.url()
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    let s = Setup {
        provider,
        mcp,
        server,
        pb,
    };
    s.server
        .save_definition(&s.pb, "reasoning", "finder", FINDER)
        .await;
    s.server
        .save_definition(&s.pb, "interaction", "ask-echo", ASK_ECHO)
        .await;
    s
}

impl Setup {
    async fn start(&self, name: &str, run_id: &str, input: Value) {
        let reply = self
            .server
            .post(
                &format!("{}/definitions/workflow/{name}/runs", self.pb),
                json!({"input": input, "run_id": run_id}),
            )
            .await;
        // 202 while it waits for a call; 200 when its calls were computations, performed
        // within the request.
        assert!(
            reply.status == 202 || reply.status == 200,
            "{:#}",
            reply.body
        );
    }

    /// Reads the run until it has ended.
    async fn ended(&self, run_id: &str, within: Duration) -> Value {
        self.server.ended(&self.pb, run_id, within).await
    }

    /// The runs a workflow run called, by their definition, as `list_runs` shows them.
    async fn child(&self, name: &str) -> Value {
        let reply = self
            .server
            .get(&format!("{}/runs?name={name}", self.pb))
            .await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
        let runs = reply.body["runs"].as_array().expect("runs").clone();
        assert_eq!(runs.len(), 1, "{runs:#?}");
        let run_id = runs[0]["run_id"].as_str().expect("a run id");
        self.server
            .get(&format!("{}/runs/{run_id}", self.pb))
            .await
            .body
    }
}

#[tokio::test]
async fn a_workflow_calls_a_tool_calling_function_and_a_tool_interaction() {
    let s = setup().await;
    s.server
        .save_definition(&s.pb, "workflow", "find-then-ask", FIND_THEN_ASK)
        .await;
    s.provider.script([
        Reply::ToolCalls(vec![tool_call("c1", "graph__lookup", json!({"q": "acme"}))]),
        Reply::Text("a-42".into()),
    ]);
    s.start("find-then-ask", "ft-1", json!({"q": "acme"})).await;
    let run = s.ended("ft-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"account": "a-42"}));
    // Each child was a run of its own, acting under the workflow's call, and each tool was
    // called once, with the id of the child that called it.
    let finder = s.child("finder").await;
    assert_eq!(finder["status"], "succeeded", "{finder:#}");
    let asked = s.child("ask-echo").await;
    assert_eq!(asked["status"], "succeeded", "{asked:#}");
    assert_eq!(asked["record"], json!({"tool": "graph/echo (read-only)"}));
    let calls = s.mcp.calls();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert_eq!(calls[0].arguments, json!({"q": "acme"}));
    assert_eq!(calls[0].meta["auto.on/run_id"], finder["run_id"]);
    assert_eq!(calls[1].arguments, json!({"account": "a-42"}));
    assert_eq!(calls[1].meta["auto.on/run_id"], asked["run_id"]);
    assert_eq!(s.provider.requests().len(), 2);
}

#[tokio::test]
async fn a_child_whose_tools_are_unfinished_raises_its_own_type_to_the_workflow() {
    let s = setup().await;
    s.server
        .save_definition(&s.pb, "workflow", "caught", FIND_CAUGHT)
        .await;
    s.server
        .save_definition(&s.pb, "workflow", "uncaught", FIND_THEN_ASK)
        .await;
    // The lookup is read-only, and the model then fails for good: tools_unfinished.
    let unfinished = || {
        [
            Reply::ToolCalls(vec![tool_call("a", "graph__lookup", json!({"q": "x"}))]),
            Reply::error(500, "api_error", "overloaded"),
            Reply::error(500, "api_error", "overloaded"),
            Reply::error(500, "api_error", "overloaded"),
        ]
    };
    s.provider.script(unfinished());
    s.start("caught", "tu-1", json!({"q": "x"})).await;
    let run = s.ended("tu-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(
        run["output"],
        json!({
            "type": "https://on.auto/problems/tools_unfinished", "status": 503,
            "kind": "tools_unfinished", "because": "model_unavailable",
        })
    );
    // Uncaught, it rejects the workflow as unavailable of that kind, keeping its because;
    // the interaction after it never runs.
    s.provider.script(unfinished());
    s.start("uncaught", "tu-2", json!({"q": "x"})).await;
    let run = s.ended("tu-2", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    assert_eq!(run["problem"]["reason"], "unavailable", "{run:#}");
    assert_eq!(run["problem"]["kind"], "tools_unfinished", "{run:#}");
    assert_eq!(run["problem"]["because"], "model_unavailable", "{run:#}");
    assert_eq!(s.mcp.calls().len(), 2, "one lookup a run, and no echo");
}

#[tokio::test]
async fn a_computation_past_its_10_second_bound_is_unworkable_to_the_workflow() {
    let s = setup().await;
    // Builtin work counts few steps: this spends time, not its work budget.
    let slow = r#"---
description: Spends its time searching
---
```ts
export default function (input: {}) {
  const s = "x".repeat(1 << 16);
  let n = 0;
  for (let i = 0; i < 1e8; i++) { n += s.indexOf("y"); }
  return { n };
}
```
"#;
    s.server
        .save_definition(&s.pb, "computation", "slow", slow)
        .await;
    let body = r#"do:
  - work:
      try:
        - run:
            call: run_definition
            with: { type: computation, name: slow }
      catch:
        errors:
          with: { status: 409 }
        do:
          - tell:
              set:
                type: '${ $error.type }'
                kind: '${ $error.kind }'
                detail: '${ $error.detail }'
"#;
    s.server
        .save_definition(&s.pb, "workflow", "bounded", &workflow(body))
        .await;
    let started = Instant::now();
    s.start("bounded", "cb-1", json!({})).await;
    let run = s.ended("cb-1", Duration::from_secs(40)).await;
    assert!(started.elapsed() >= Duration::from_secs(10), "{run:#}");
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(
        run["output"],
        json!({
            "type": "https://open-workflow-specification.org/spec/1.0.0/errors/runtime",
            "kind": "unworkable",
            "detail": "The program was stopped: The program ran longer than 10 seconds.",
        })
    );
}
