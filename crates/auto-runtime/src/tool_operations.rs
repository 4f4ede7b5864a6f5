//! The tool-server operations (reasoning page, "Find the tool names"; supplement §2): `search`
//! lists the servers set up for a playbook with the tools the operator allows on each, ranked by
//! `terms`; `introspect` reads one tool with the schema of its arguments; `execute` calls it once
//! as a run would and returns what the run's model would see, recorded in the playbook's
//! history; `execute` with `dry_run` reports what the call would check, calling nothing.

use std::sync::Arc;

use auto_schema::json_bytes;
use auto_store::{NewEvent, PlaybookRef};
use auto_tools::limits::ARGUMENTS_BYTES_MAX;
use auto_tools::{CallOutcome, ListedTool, ToolServerConfig, Transport, content};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::auth::{Caller, Permission};
use crate::problem::{Problem, Reason};
use crate::reasoning_tools::cut_description;
use crate::service::{Service, store_problem};

/// `search`: the servers set up for the playbook and the tools the operator allows on each.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolServerList {
    pub servers: Vec<ToolServerOut>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolServerOut {
    /// The name a function's `tools` uses, such as `graph` in `graph/search`.
    pub name: String,
    /// `http` (MCP over Streamable HTTP) or `stdio`.
    pub transport: String,
    /// The tools the operator allows, best match of `terms` first.
    pub tools: Vec<ToolOut>,
    /// Why the server could not list its tools now, in the words of `tool_server_failed`.
    pub failure: Option<ToolServerFailureOut>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolOut {
    pub name: String,
    /// The name the model sees, such as `graph__search`.
    pub model_name: String,
    pub description: String,
    /// Whether the server marks the tool read-only.
    pub read_only: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolServerFailureOut {
    pub because: String,
    pub detail: String,
}

/// `introspect`: one tool in full.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolDetail {
    pub server: String,
    pub name: String,
    pub model_name: String,
    pub description: String,
    pub read_only: bool,
    /// The schema of the tool's arguments, as the server lists it and a run sends it.
    pub input_schema: Value,
    /// The parts of the schema a provider may refuse or not enforce.
    pub warnings: Vec<String>,
}

/// `execute` and `dry_run`: the arguments of one call.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteTool {
    /// The tool's arguments, a JSON object; `{}` when left out.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Report what the call would check, and call nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// What a call came to, or would check.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteOut {
    pub server: String,
    pub tool: String,
    pub read_only: bool,
    pub dry_run: bool,
    pub arguments_bytes: usize,
    /// Each check a run makes before it sends the call, and whether it passed.
    pub checks: Vec<CheckOut>,
    /// What the run's model would see of the result (absent for a dry run or a refused call).
    pub content: Option<String>,
    /// Whether the model would see it as a tool error.
    pub is_error: Option<bool>,
    /// Why the call failed, as `tool_call_failed` names it.
    pub failed_because: Option<String>,
    /// The id of the call's `tool_call_started` event in the playbook's history.
    pub event_id: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CheckOut {
    pub check: String,
    pub passed: bool,
    pub detail: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct SearchQuery {
    pub terms: Option<String>,
}

impl Service {
    pub async fn search_tools(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        terms: Option<&str>,
    ) -> Result<ToolServerList, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let words: Vec<String> = terms
            .unwrap_or_default()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut servers = Vec::new();
        for server in self.models.tools.for_playbook(&pb.org, &pb.playbook) {
            servers.push(search_server(server.clone(), &words).await);
        }
        // The server with the best-matching tool first; the configuration's order otherwise.
        let best = |s: &ToolServerOut| s.tools.first().map_or(0, |t| score(t, &words));
        servers.sort_by_key(|s| std::cmp::Reverse(best(s)));
        Ok(ToolServerList { servers })
    }

    pub async fn introspect_tool(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        server: &str,
        tool: &str,
    ) -> Result<ToolDetail, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let (config, listed) = self.find_tool(pb, server, tool).await?;
        let model_name = model_name(&config.name, &listed.name);
        Ok(ToolDetail {
            server: config.name.clone(),
            name: listed.name.clone(),
            description: listed.description.clone(),
            read_only: listed.read_only,
            warnings: auto_schema::tool_schema_warnings(&model_name, &listed.input_schema),
            input_schema: listed.input_schema,
            model_name,
        })
    }

    pub async fn execute_tool(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        server: &str,
        tool: &str,
        body: ExecuteTool,
    ) -> Result<ExecuteOut, Problem> {
        caller.require(&pb.org, Permission::Run)?;
        self.require_playbook(pb).await?;
        let (config, listed) = self.find_tool(pb, server, tool).await?;
        let arguments = Value::Object(body.arguments.clone());
        let arguments_bytes = json_bytes(&arguments).unwrap_or(0);
        let checks = vec![
            CheckOut {
                check: "configured".into(),
                passed: true,
                detail: format!(
                    "The tool server {} is configured for this playbook.",
                    config.name
                ),
            },
            CheckOut {
                check: "allowed".into(),
                passed: true,
                detail: format!("The operator allows {} on {}.", listed.name, config.name),
            },
            CheckOut {
                check: "listed".into(),
                passed: true,
                detail: format!("The server lists {}.", listed.name),
            },
            CheckOut {
                check: "arguments_bytes".into(),
                passed: arguments_bytes <= ARGUMENTS_BYTES_MAX,
                detail: format!(
                    "The arguments hold {arguments_bytes} bytes; a call may send at most {ARGUMENTS_BYTES_MAX} (16 KiB)."
                ),
            },
        ];
        let mut out = ExecuteOut {
            server: config.name.clone(),
            tool: listed.name.clone(),
            read_only: listed.read_only,
            dry_run: body.dry_run,
            arguments_bytes,
            checks,
            content: None,
            is_error: None,
            failed_because: None,
            event_id: None,
        };
        if body.dry_run || out.checks.iter().any(|c| !c.passed) {
            return Ok(out);
        }
        self.call_and_record(caller, pb, &config, &listed, body.arguments, &mut out)
            .await?;
        Ok(out)
    }

    /// Calls the tool once, as a run would, recording `tool_call_started` before and its
    /// ending after in the playbook's history.
    async fn call_and_record(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        config: &Arc<ToolServerConfig>,
        listed: &ListedTool,
        arguments: Map<String, Value>,
        out: &mut ExecuteOut,
    ) -> Result<(), Problem> {
        let execution = format!("execute-{}", uuid::Uuid::now_v7());
        let secrets = config.secrets();
        let mut started = json!({
            "execution": execution,
            "caller": caller.id,
            "server": config.name,
            "tool": listed.name,
            "arguments_bytes": out.arguments_bytes,
            "read_only": listed.read_only,
        });
        if config.record_content {
            started["arguments"] =
                content::scrub_value(&Value::Object(arguments.clone()), &secrets);
        }
        let started_id = self
            .record_tool_event(pb, config, "tool_call_started", started)
            .await?;
        out.event_id = Some(started_id);
        let connection = auto_tools::open(config.clone())
            .await
            .map_err(|f| tool_server_failed(&config.name, &f))?;
        let outcome = connection
            .call(
                &listed.name,
                arguments,
                &execution,
                &CancellationToken::new(),
            )
            .await;
        connection.close().await;
        let ended = match &outcome {
            CallOutcome::Answered {
                result,
                jsonrpc_id,
                duration_ms,
            } => {
                let is_error = content::is_error(result);
                out.content = Some(content::scrub(&content::model_text(result), &secrets));
                out.is_error = Some(is_error);
                let mut data = json!({
                    "execution": execution,
                    "is_error": is_error,
                    "result_bytes": json_bytes(result).unwrap_or(0),
                    "duration_ms": duration_ms,
                    "jsonrpc_id": jsonrpc_id,
                });
                if config.record_content {
                    data["result"] = content::scrub_value(result, &secrets);
                }
                ("tool_call_answered", data)
            }
            CallOutcome::Failed {
                because,
                message,
                jsonrpc_id,
                duration_ms,
            } => {
                let message = content::scrub(message, &secrets);
                out.content = Some(format!("The call failed: {message}"));
                out.is_error = Some(true);
                out.failed_because = Some(because.as_str().to_owned());
                (
                    "tool_call_failed",
                    json!({
                        "execution": execution,
                        "because": because.as_str(),
                        "message": message,
                        "duration_ms": duration_ms,
                        "jsonrpc_id": jsonrpc_id,
                    }),
                )
            }
        };
        self.record_tool_event(pb, config, ended.0, ended.1).await?;
        Ok(())
    }

    async fn record_tool_event(
        &self,
        pb: &PlaybookRef,
        config: &ToolServerConfig,
        event_type: &str,
        data: Value,
    ) -> Result<String, Problem> {
        let id = crate::runs::new_event_id();
        let mut event = NewEvent::new(
            id.clone(),
            event_type,
            format!("/tool-servers/{}", config.name),
        );
        event.data = Some(data);
        self.store
            .append_events(pb, vec![event])
            .await
            .map_err(store_problem)?;
        Ok(id)
    }

    /// The server set up for the playbook and its tool, allowed and listed; `not_found`
    /// otherwise, and `tool_server_failed` when the server cannot list its tools.
    async fn find_tool(
        &self,
        pb: &PlaybookRef,
        server: &str,
        tool: &str,
    ) -> Result<(Arc<ToolServerConfig>, ListedTool), Problem> {
        let Some(config) = self.models.tools.find(&pb.org, &pb.playbook, server) else {
            return Err(Problem::not_found(format!(
                "No tool server {server} is set up for this playbook; call search to see those that are."
            )));
        };
        if !config.allows(tool) {
            return Err(Problem::not_found(format!(
                "The operator does not allow the tool {tool} on {server}; call search to see the tools allowed."
            )));
        }
        let listed = list(&config)
            .await
            .map_err(|f| tool_server_failed(server, &f))?;
        let Some(found) = listed.into_iter().find(|t| t.name == tool) else {
            return Err(Problem::not_found(format!(
                "The tool server {server} does not list the tool {tool}; call search to see the tools it lists."
            )));
        };
        Ok((config, found))
    }
}

async fn list(
    config: &Arc<ToolServerConfig>,
) -> Result<Vec<ListedTool>, auto_tools::ServerFailure> {
    let connection = auto_tools::open(config.clone()).await?;
    let listed = connection.list_tools().await;
    connection.close().await;
    listed
}

async fn search_server(config: Arc<ToolServerConfig>, words: &[String]) -> ToolServerOut {
    let transport = match config.transport {
        Transport::Http { .. } => "http",
        Transport::Stdio { .. } => "stdio",
    };
    let mut out = ToolServerOut {
        name: config.name.clone(),
        transport: transport.into(),
        tools: Vec::new(),
        failure: None,
    };
    match list(&config).await {
        Ok(listed) => {
            out.tools = listed
                .into_iter()
                .filter(|t| config.allows(&t.name))
                .map(|t| ToolOut {
                    model_name: model_name(&config.name, &t.name),
                    description: cut_description(&t.description),
                    name: t.name,
                    read_only: t.read_only,
                })
                .collect();
            out.tools
                .sort_by_key(|t| std::cmp::Reverse(score(t, words)));
        }
        Err(failure) => {
            out.failure = Some(ToolServerFailureOut {
                because: failure.because.as_str().into(),
                detail: failure.detail,
            });
        }
    }
    out
}

/// How many of the words a tool's name and description hold.
fn score(tool: &ToolOut, words: &[String]) -> usize {
    let text = format!("{} {}", tool.name, tool.description).to_lowercase();
    words.iter().filter(|w| text.contains(w.as_str())).count()
}

/// The name the model sees when the tool is the only one of its name in a run.
fn model_name(server: &str, tool: &str) -> String {
    auto_tools::naming::model_names(&[(server, tool)]).remove(0)
}

fn tool_server_failed(server: &str, failure: &auto_tools::ServerFailure) -> Problem {
    let mut problem = Problem::new(
        Reason::Unavailable,
        format!("The tool server {server} cannot be used"),
        format!(
            "The tool server {server} cannot be used: {}.",
            failure.detail
        ),
    )
    .with_kind("tool_server_failed");
    problem.because = Some(failure.because.as_str().into());
    problem.retry_after_seconds = failure.retry_after_ms.map(|ms| ms.div_ceil(1000));
    problem
}
