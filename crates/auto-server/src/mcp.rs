//! MCP (supplement §3): the operations as tools, over Streamable HTTP at `/mcp` and
//! `/v1/orgs/{org}/playbooks/{pb}/mcp`, and over stdio for `auto mcp`.
//!
//! The tools are generated from `openapi::OPERATIONS` and the body types' schemas ([`tools`]);
//! a call becomes the operation's HTTP request and goes through the API's own router in
//! process ([`dispatch`]), carrying the bearer key of the HTTP request that carried the call.
//! So keys, roles, decoding and problem documents are exactly those of HTTP.
//!
//! The formats are resources (`auto://docs/...`, the repository's guides embedded:
//! [`resources`]) and the common jobs prompts ([`prompts`]), on every endpoint alike.
//!
//! **Invariant:** a call on a playbook's endpoint reaches that playbook only: the org and the
//! playbook of its request come from the endpoint's path, never from the arguments (an `org`
//! or `playbook` argument there is refused as unknown).

mod descriptions;
mod dispatch;
pub mod prompts;
pub mod resources;
mod tools;

use std::net::SocketAddr;
use std::sync::Arc;

use auto_engine::definitions::Checkers;
use auto_store::Store;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tower::ServiceExt as _;

pub use dispatch::PlaybookScope;
pub use tools::{Reach, tools};

use crate::auth::{Keys, Permission};
use crate::http::ProblemAnswer;
use crate::http::{AppState, BODY_BYTES_MAX};
use crate::metrics::Metrics;
use crate::problem::Problem;
use crate::service::Service;

/// The path of the server's endpoint.
pub const MCP_PATH: &str = "/mcp";
/// The path of a playbook's endpoint.
pub const PLAYBOOK_MCP_PATH: &str = "/v1/orgs/{org}/playbooks/{pb}/mcp";
/// The largest answer of an operation that a tool call reads; far above any the API gives.
pub const RESPONSE_BYTES_MAX: usize = 64 * 1024 * 1024;
/// The largest MCP message: a request body of the API, wrapped in JSON-RPC.
pub const MESSAGE_BYTES_MAX: usize = BODY_BYTES_MAX + 64 * 1024;

/// What a model reads when it connects, before any tool's description.
const INSTRUCTIONS: &str = "auto is a durable runtime for AI playbooks. An org holds \
playbooks; a playbook holds definitions (typed documents: reasoning, workflow, interaction, \
computation, recall, prediction), each saved in versions after a check, and an ordered event log. \
Ids are lowercase letters, digits and hyphens. Start with list_orgs and list_playbooks, read a \
definition with get_definition before changing it, and read a rejection's problem document: its \
issues say where and what to fix. A rejection comes back as a tool result with isError whose text \
is a problem document (JSON): reason is invalid_input (fix the arguments: issues[] name each \
problem at a pointer, with line and column for a document), forbidden (the key may not do this), \
not_found or conflict; detail says what to do. Before writing a definition, read its format: \
the resources auto://docs/reasoning-format, auto://docs/workflow-format, \
auto://docs/interaction-format, auto://docs/computation-format, auto://docs/recall-format, \
auto://docs/prediction-format and auto://docs/output-shapes; the prompts \
write_reasoning_function and write_workflow give the steps. check_definition answers a \
document's issues by line and saves nothing.";

/// The server's title in `initialize`, beside its name `auto`: what a client shows for it.
const SERVER_TITLE: &str = "auto: durable runtime for AI playbooks";

/// Where a handler's calls go: which playbook, if the endpoint names one.
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// `/mcp`, or stdio without a playbook: every tool names its org and playbook.
    Server,
    /// `/v1/orgs/{org}/playbooks/{pb}/mcp`: the playbook of each HTTP request's path.
    PlaybookOfPath,
    /// One playbook, fixed (stdio with `--org` and `--playbook`).
    Playbook(PlaybookScope),
}

/// The MCP server: lists the tools of its endpoint and runs each call through the API.
#[derive(Clone)]
pub struct AutoMcp {
    api: Router,
    endpoint: Endpoint,
    tools: Arc<Vec<Tool>>,
}

impl AutoMcp {
    /// A server whose calls go through `api`, the API's router.
    pub fn new(api: Router, endpoint: Endpoint) -> Self {
        let reach = match endpoint {
            Endpoint::Server => Reach::Server,
            Endpoint::PlaybookOfPath | Endpoint::Playbook(_) => Reach::Playbook,
        };
        Self {
            api,
            endpoint,
            tools: Arc::new(tools(reach)),
        }
    }

    fn reach(&self) -> Reach {
        match self.endpoint {
            Endpoint::Server => Reach::Server,
            _ => Reach::Playbook,
        }
    }

    fn scope(&self, parts: Option<&Parts>) -> Result<Option<PlaybookScope>, Problem> {
        match &self.endpoint {
            Endpoint::Server => Ok(None),
            Endpoint::Playbook(scope) => Ok(Some(scope.clone())),
            Endpoint::PlaybookOfPath => parts
                .and_then(|parts| scope_of_path(parts.uri.path()))
                .map(Some)
                .ok_or_else(|| Problem::internal(&"a playbook's MCP call came without its path")),
        }
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        parts: Option<&Parts>,
    ) -> Result<rmcp::model::CallToolResult, ErrorData> {
        let Some(op) = tools::operation(self.reach(), &request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "There is no tool {}: list the tools to see them.",
                    request.name
                ),
                None,
            ));
        };
        let authorization = parts
            .and_then(|parts| parts.headers.get(header::AUTHORIZATION))
            .and_then(|value| value.to_str().ok());
        let http_request = self.scope(parts).and_then(|scope| {
            dispatch::request(
                op,
                scope.as_ref(),
                request.arguments.unwrap_or_default(),
                authorization,
            )
        });
        let http_request = match http_request {
            Ok(http_request) => http_request,
            Err(problem) => return Ok(dispatch::problem_result(&problem)),
        };
        let response = match self.api.clone().oneshot(http_request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        match axum::body::to_bytes(response.into_body(), RESPONSE_BYTES_MAX).await {
            Ok(body) => Ok(dispatch::result(status, &body)),
            Err(error) => Ok(dispatch::problem_result(&Problem::internal(&error))),
        }
    }
}

impl ServerHandler for AutoMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("auto", env!("CARGO_PKG_VERSION")).with_title(SERVER_TITLE),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            resources::GUIDES.iter().map(resources::resource).collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match resources::guide(&request.uri) {
            Some(guide) => Ok(ReadResourceResult::new(vec![resources::contents(guide)]).into()),
            None => Err(ErrorData::resource_not_found(
                format!(
                    "There is no resource {}: list the resources to see them.",
                    request.uri
                ),
                Some(serde_json::json!({ "uri": request.uri })),
            )),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&request.name, request.arguments.as_ref(), self.reach())
            .map(Into::into)
            .map_err(|message| ErrorData::invalid_params(message, None))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<Parts>();
        self.call(request, parts).await.map(Into::into)
    }
}

/// The playbook of a path `/v1/orgs/{org}/playbooks/{pb}/mcp`.
fn scope_of_path(path: &str) -> Option<PlaybookScope> {
    let inner = path.strip_prefix("/v1/orgs/")?.strip_suffix("/mcp")?;
    let (org, playbook) = inner.split_once("/playbooks/")?;
    Some(PlaybookScope {
        org: org.into(),
        playbook: playbook.into(),
    })
}

/// Adds the MCP endpoints to the API's router. Calls go through `api` itself.
pub fn mount(api: Router, state: &AppState, listen: SocketAddr) -> Router {
    let config = http_config(!state.keys.is_empty(), listen);
    let endpoint = |endpoint: Endpoint| {
        let server = AutoMcp::new(api.clone(), endpoint);
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config.clone(),
        )
    };
    let mcp = Router::new()
        .route_service(MCP_PATH, endpoint(Endpoint::Server))
        .route_service(PLAYBOOK_MCP_PATH, endpoint(Endpoint::PlaybookOfPath))
        .layer(middleware::from_fn_with_state(state.keys.clone(), gate))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::http::observe,
        ));
    api.merge(mcp)
}

/// Streamable HTTP without sessions: every request stands alone, carries its own key and may
/// reach any of several servers on one PostgreSQL store.
fn http_config(keys_configured: bool, listen: SocketAddr) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(MESSAGE_BYTES_MAX);
    if keys_configured {
        // The Host check defends a server without keys on loopback from a web page that
        // rebinds its own name to 127.0.0.1. A server with keys refuses every request without
        // one, which such a page cannot have; and it is reached by names this server cannot
        // know, so it checks no Host.
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(["localhost", "127.0.0.1", "::1", &listen.ip().to_string()])
    }
}

/// Refuses a request without a known key, and on a playbook's endpoint a key of another org,
/// before MCP sees it; each call's operation checks the key's role again, as over HTTP.
async fn gate(State(keys): State<Arc<Keys>>, request: Request, next: Next) -> Response {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let caller = match keys.authenticate(authorization) {
        Ok(caller) => caller,
        Err(problem) => return ProblemAnswer(problem).into_response(),
    };
    if let Some(scope) = scope_of_path(request.uri().path())
        && let Err(problem) = caller.require(&scope.org, Permission::Read)
    {
        return ProblemAnswer(problem).into_response();
    }
    next.run(request).await
}

/// Serves MCP over stdin and stdout for a store in this process, as the caller `local` (no
/// keys), for `auto mcp`, until the client closes them.
///
/// The workflow scheduler and the sweep of triggers run meanwhile, as beside a server's API:
/// without them a workflow that waits (a timer, a call, a person) would stay `started`.
pub async fn serve_local_stdio(
    store: Arc<dyn Store>,
    checkers: Checkers,
    endpoint: Endpoint,
) -> anyhow::Result<()> {
    let service = Service::new(store, checkers);
    let workers = crate::Workers::spawn(&service);
    let api = crate::http::router(AppState {
        service,
        keys: Arc::new(Keys::default()),
        metrics: Arc::new(Metrics::new()),
        // Never told: the stdio server serves until its client leaves.
        stopping: tokio::sync::watch::channel(false).1,
    });
    let served = serve_stdio(api, endpoint).await;
    workers.stop().await;
    served
}

/// Serves MCP over stdin and stdout until the client closes them; the calls go through `api`.
pub async fn serve_stdio(api: Router, endpoint: Endpoint) -> anyhow::Result<()> {
    let running = AutoMcp::new(api, endpoint)
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_playbook_endpoint_path_names_its_playbook() {
        assert_eq!(
            scope_of_path("/v1/orgs/acme/playbooks/main/mcp"),
            Some(PlaybookScope {
                org: "acme".into(),
                playbook: "main".into()
            })
        );
        assert_eq!(scope_of_path("/mcp"), None);
    }
}
