//! HTTP: the routes of supplement §2 over the service. Thin: parse, call the operation, render.
//!
//! Every error path answers a problem document: malformed JSON, a wrong content type, an
//! oversized body, an unknown route or method, a panic. Never a bare 500 or an HTML page.

use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use auto_store::PlaybookRef;
use axum::extract::{FromRequest, MatchedPath, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::*;
use crate::auth::{Caller, Keys};
use crate::events::EventQuery;
use crate::interaction_runs::RequestQuery;
use crate::metrics::Metrics;
use crate::problem::{Problem, ProblemIssue};
use crate::runs::{RunAnswer, RunQuery};
use crate::service::Service;

/// The largest request body: a definition's source (512 KiB) with its overview and diagram,
/// escaped in JSON, fits well within it.
pub const BODY_BYTES_MAX: usize = 2 * 1024 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub service: Service,
    pub keys: Arc<Keys>,
    pub metrics: Arc<Metrics>,
    /// True once the server stops: the events streams end.
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

type Answer<T> = Result<T, ProblemAnswer>;

/// A problem document as an HTTP answer: its status, `application/problem+json`,
/// `Retry-After` when the problem says when to try again, and `WWW-Authenticate: Bearer` on a
/// 401. The runtime's problems know no
/// HTTP; this is where they become answers.
#[derive(Debug)]
pub struct ProblemAnswer(pub Problem);

impl From<Problem> for ProblemAnswer {
    fn from(problem: Problem) -> Self {
        Self(problem)
    }
}

impl IntoResponse for ProblemAnswer {
    fn into_response(self) -> Response {
        let problem = self.0;
        let status =
            StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(&problem)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = problem.retry_after_seconds {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        // A request without a known key is asked for one, as RFC 6750 has it.
        if problem.status == StatusCode::UNAUTHORIZED.as_u16() {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// The router of the whole API.
pub fn router(state: AppState) -> Router {
    let pb = "/v1/orgs/{org}/playbooks/{pb}";
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/me", get(get_caller))
        .route("/v1/orgs", post(create_org).get(list_orgs))
        .route("/v1/orgs/{org}", get(get_org).delete(delete_org))
        .route("/v1/orgs/{org}/models", get(list_models))
        .route(
            "/v1/orgs/{org}/playbooks",
            post(create_playbook).get(list_playbooks),
        )
        .route(pb, get(get_playbook).delete(delete_playbook))
        .route(&format!("{pb}/purge"), post(purge_runs))
        .route(
            &format!("{pb}/definitions"),
            post(create_definition).get(list_definitions),
        )
        .route(&format!("{pb}/definitions/check"), post(check_definition))
        .route(
            &format!("{pb}/definitions/{{type}}/{{name}}/versions"),
            get(list_definition_versions),
        )
        .route(
            &format!("{pb}/definitions/{{type}}/{{name}}"),
            get(get_definition)
                .put(update_definition)
                .delete(retire_definition),
        )
        .route(
            &format!("{pb}/events"),
            post(publish_event).get(list_events),
        )
        .route(
            &format!("{pb}/events/stream"),
            get(crate::stream::stream_events),
        )
        .route(&format!("{pb}/events/{{event_id}}"), get(get_event))
        .route(
            &format!("{pb}/definitions/{{type}}/{{name}}/runs"),
            post(run_definition),
        )
        .route(&format!("{pb}/runs"), get(list_runs))
        .route(&format!("{pb}/runs/{{run_id}}"), get(get_run))
        .route(&format!("{pb}/runs/{{run_id}}/cancel"), post(cancel_run))
        .route(
            &format!("{pb}/runs/{{run_id}}/events"),
            post(send_run_event),
        )
        .route(
            &format!("{pb}/tool-servers/search"),
            get(crate::http_tools::search),
        )
        .route(
            &format!("{pb}/tool-servers/{{server}}/tools/{{tool}}"),
            get(crate::http_tools::introspect),
        )
        .route(
            &format!("{pb}/tool-servers/{{server}}/tools/{{tool}}/execute"),
            post(crate::http_tools::execute),
        )
        .route(&format!("{pb}/requests"), get(list_requests))
        .route(
            &format!("{pb}/requests/{{request_id}}/answer"),
            post(answer_interaction),
        )
        .merge(crate::studio::routes())
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panicked))
        .with_state(state)
}

/// Counts and times each request, and logs it.
pub(crate) async fn observe(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let uri_path = request.uri().path().to_owned();
    let place = Place::of(&uri_path);
    let span = tracing::info_span!(
        "request",
        otel.name = %format_args!("{method} {route}"),
        otel.kind = "server",
        http.response.status_code = tracing::field::Empty,
        org = place.org.map(display),
        playbook = place.playbook.map(display),
        run_id = place.run_id.map(display),
    );
    // A caller's `traceparent` makes this request a span of the caller's trace.
    let caller = crate::traces::request_context(request.headers());
    let _ = span.set_parent(caller);
    let response =
        ensure_problem(next.run(request).instrument(span.clone()).await, &uri_path).await;
    let _entered = span.enter();
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    let elapsed = started.elapsed();
    state
        .metrics
        .observe_request(method.as_str(), &route, status, elapsed);
    tracing::info!(%method, %route, status, elapsed_ms = elapsed.as_millis() as u64, "request");
    response
}

/// The org, playbook and run a request's path names, for its log lines.
#[derive(Debug, Default, PartialEq)]
struct Place<'a> {
    org: Option<&'a str>,
    playbook: Option<&'a str>,
    run_id: Option<&'a str>,
}

impl<'a> Place<'a> {
    /// Reads `/v1/orgs/{org}/playbooks/{pb}/runs/{run_id}/...` as far as the path goes.
    fn of(path: &'a str) -> Self {
        let mut place = Place::default();
        let mut segments = path.trim_start_matches('/').split('/');
        if segments.next() != Some("v1") || segments.next() != Some("orgs") {
            return place;
        }
        place.org = segments.next().filter(|s| !s.is_empty());
        if segments.next() == Some("playbooks") {
            place.playbook = segments.next().filter(|s| !s.is_empty());
            if segments.next() == Some("runs") {
                place.run_id = segments.next().filter(|s| !s.is_empty());
            }
        }
        place
    }
}

/// Turns an error response that is not a problem document (a rejection of an extractor this
/// module does not wrap) into one, so no error path answers bare text.
async fn ensure_problem(response: Response, uri_path: &str) -> Response {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if status.as_u16() < 400 || is_problem {
        return response;
    }
    let body = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .unwrap_or_default();
    let said = String::from_utf8_lossy(&body).trim().to_owned();
    let problem = match status {
        StatusCode::NOT_FOUND => Problem::not_found(format!("Nothing is at {uri_path}. {said}")),
        StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        s if s.is_client_error() => Problem::invalid_input("The request is not valid", said),
        _ => Problem::internal(&said),
    };
    ProblemAnswer(problem).into_response()
}

fn panicked(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ProblemAnswer(Problem::internal(&"a handler panicked")).into_response()
}

async fn unknown_route(request: Request) -> ProblemAnswer {
    ProblemAnswer(Problem::not_found(format!(
        "There is no route {} {}: the API lives under /v1 (see /v1/openapi.json).",
        request.method(),
        request.uri().path()
    )))
}

/// A known route asked with a method it does not take: 405, with the methods it takes in
/// `Allow` (the router adds the header).
async fn method_not_allowed(request: Request) -> ProblemAnswer {
    let problem = Problem::invalid_input(
        "The route does not take this method",
        format!(
            "The route {} does not take {}: the Allow header names its methods (see /v1/openapi.json).",
            request.uri().path(),
            request.method()
        ),
    )
    .with_kind("method_not_allowed")
    .with_status(StatusCode::METHOD_NOT_ALLOWED.as_u16());
    ProblemAnswer(problem)
}

/// The caller of a request, from its bearer key.
pub(crate) struct Authed(pub(crate) Caller);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Authed
where
    AppState: axum::extract::FromRef<S>,
{
    type Rejection = ProblemAnswer;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let state = <AppState as axum::extract::FromRef<S>>::from_ref(state);
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        Ok(Authed(state.keys.authenticate(authorization)?))
    }
}

/// A JSON body: `application/json`, at most [`BODY_BYTES_MAX`], an object, decoded into `T`
/// with every unknown or mistyped field reported at its pointer.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ProblemAnswer;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        check_content_type(request.headers())?;
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    too_large()
                } else {
                    Problem::invalid_input("The request body cannot be read", rejection.body_text())
                }
            })?;
        Ok(Body(decode(&bytes)?))
    }
}

pub(crate) fn too_large() -> Problem {
    Problem::invalid_input(
        "The request body is too large",
        format!("The body is larger than {BODY_BYTES_MAX} bytes."),
    )
    .with_kind("too_large")
}

fn check_content_type(headers: &HeaderMap) -> Result<(), Problem> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
    {
        return Ok(());
    }
    let shown = if content_type.is_empty() {
        "no content type".to_owned()
    } else {
        content_type.to_owned()
    };
    Err(Problem::invalid_input(
        "The request body is not JSON",
        format!("The body has {shown}: send it as Content-Type: application/json."),
    )
    .with_kind("unsupported_media_type"))
}

/// How deeply a request body may nest: a run's input may nest 512 levels ("The input may be at
/// most 256 KiB as JSON and 512 levels deep"), inside the body's own object. Past this the body
/// is refused before it is parsed, so no hostile body makes the parser, or any later walk over
/// its value, recurse deeply enough to overflow a worker's stack.
pub const BODY_DEPTH_MAX: usize = 513;

/// The deepest nesting of lists and objects in JSON text, counted without parsing it.
fn nesting_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// JSON text parsed without serde_json's limit of 128 levels: a value may nest 512, and what
/// the server accepted it must read back. Bound the depth first ([`BODY_DEPTH_MAX`]).
pub(crate) fn parse_json(bytes: &[u8]) -> serde_json::Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    deserializer.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Decodes a JSON object into `T`, with problems at pointers.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    if bytes.len() > BODY_BYTES_MAX {
        return Err(too_large());
    }
    if nesting_depth(bytes) > BODY_DEPTH_MAX {
        return Err(Problem::invalid_request(vec![ProblemIssue::field(
            "",
            format!("The body nests lists and objects deeper than {BODY_DEPTH_MAX} levels."),
        )]));
    }
    let value: Value = parse_json(bytes).map_err(|e| {
        Problem::invalid_input(
            "The request body is not valid JSON",
            format!("The body is not valid JSON: {e}."),
        )
        .with_kind("malformed_json")
    })?;
    if !value.is_object() {
        return Err(Problem::invalid_request(vec![ProblemIssue::field(
            "",
            "The body must be a JSON object.",
        )]));
    }
    serde_path_to_error::deserialize::<_, T>(value).map_err(|error| {
        let path = error.path().to_string();
        let pointer = if path == "." {
            String::new()
        } else {
            format!("/{}", path.replace('.', "/"))
        };
        let message = describe_serde_error(&error.into_inner().to_string());
        Problem::invalid_request(vec![ProblemIssue::field(pointer, message)])
    })
}

/// Rewrites serde's words ("missing field `diagram`") as a sentence for a person.
fn describe_serde_error(text: &str) -> String {
    if let Some(rest) = text.strip_prefix("missing field `") {
        let field = rest.trim_end_matches('`');
        return format!("The field {field} is required.");
    }
    if let Some(rest) = text.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or(rest);
        let expected = rest
            .split("expected ")
            .nth(1)
            .map(|e| format!(" (expected {e})"))
            .unwrap_or_default();
        return format!("The field {field} is not known{expected}.");
    }
    if let Some(rest) = text.strip_prefix("invalid type: ") {
        return format!("Invalid type: {rest}.");
    }
    format!("{text}.")
}

pub(crate) fn pb_ref(org: String, pb: String) -> PlaybookRef {
    PlaybookRef::new(org, pb)
}

/// Healthy when the store can be reached and written: a store that still reads but cannot
/// write (a full disk, a read-only file) answers 503, so a supervisor sees it. The write probe
/// is the store's own (`Store::check_writable`), made on every call: a flag kept from the last
/// failed write could not tell that the fault cleared while no write was made.
async fn healthz(State(state): State<AppState>) -> Response {
    if let Err(e) = state.service.store().check_writable().await
        && state.service.store().now().await.is_ok()
    {
        let problem = Problem::new(
            crate::problem::Reason::Unavailable,
            "The store is unavailable",
            "The server cannot write to its store.",
        )
        .with_kind("store_unavailable")
        .tap_log(&e);
        return ProblemAnswer(problem).into_response();
    }
    match state.service.store().now().await {
        Ok(_) => Json(Health {
            status: "ok".into(),
            store: state.service.store().kind().into(),
            version: env!("CARGO_PKG_VERSION").into(),
        })
        .into_response(),
        Err(e) => {
            let problem = Problem::new(
                crate::problem::Reason::Unavailable,
                "The store is unavailable",
                "The server cannot reach its store.",
            )
            .with_kind("store_unavailable")
            .tap_log(&e);
            ProblemAnswer(problem).into_response()
        }
    }
}

trait TapLog {
    fn tap_log(self, cause: &dyn std::fmt::Display) -> Self;
}

impl TapLog for Problem {
    fn tap_log(self, cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(%cause, "health check failed");
        self
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    // The queue is read at each scrape; a store that cannot answer leaves the last figures,
    // and the scrape still shows everything else.
    match state.service.store().work_backlog().await {
        Ok(backlog) => state.metrics.observe_backlog(&backlog),
        Err(error) => tracing::warn!(%error, "the work queue could not be read for /metrics"),
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

async fn create_org(
    State(s): State<AppState>,
    Authed(c): Authed,
    Body(body): Body<CreateOrg>,
) -> Answer<(StatusCode, Json<OrgOut>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.service.create_org(&c, body).await?),
    ))
}

async fn list_orgs(State(s): State<AppState>, Authed(c): Authed) -> Answer<Json<OrgList>> {
    Ok(Json(s.service.list_orgs(&c).await?))
}

async fn get_org(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path(org): Path<String>,
) -> Answer<Json<OrgOut>> {
    Ok(Json(s.service.get_org(&c, &org).await?))
}

async fn create_playbook(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path(org): Path<String>,
    Body(body): Body<CreatePlaybook>,
) -> Answer<(StatusCode, Json<PlaybookOut>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.service.create_playbook(&c, &org, body).await?),
    ))
}

async fn list_playbooks(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path(org): Path<String>,
) -> Answer<Json<PlaybookList>> {
    Ok(Json(s.service.list_playbooks(&c, &org).await?))
}

async fn list_models(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path(org): Path<String>,
) -> Answer<Json<ModelList>> {
    Ok(Json(s.service.list_models(&c, &org).await?))
}

async fn get_playbook(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
) -> Answer<Json<PlaybookOut>> {
    Ok(Json(s.service.get_playbook(&c, &pb_ref(org, pb)).await?))
}

/// `?force=` of the deletes: `true` or `false`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteQuery {
    force: Option<String>,
}

impl DeleteQuery {
    fn force(&self) -> Result<bool, Problem> {
        match self.force.as_deref() {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(other) => Err(Problem::invalid_request(vec![ProblemIssue::field(
                "/force",
                format!("force is true or false; got {other:?}."),
            )])),
        }
    }
}

async fn delete_org(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path(org): Path<String>,
    query: Result<Query<DeleteQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<DeletedOut>> {
    let Query(query) = query.map_err(query_problem)?;
    let force = query.force()?;
    Ok(Json(s.service.delete_org(&c, &org, force).await?))
}

async fn delete_playbook(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    query: Result<Query<DeleteQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<DeletedOut>> {
    let Query(query) = query.map_err(query_problem)?;
    let force = query.force()?;
    Ok(Json(
        s.service
            .delete_playbook(&c, &pb_ref(org, pb), force)
            .await?,
    ))
}

async fn purge_runs(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    Body(body): Body<PurgeRuns>,
) -> Answer<Json<PurgeOut>> {
    Ok(Json(
        s.service.purge_runs(&c, &pb_ref(org, pb), body).await?,
    ))
}

async fn create_definition(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    Body(body): Body<CreateDefinition>,
) -> Answer<(StatusCode, Json<DefinitionOut>)> {
    let out = s
        .service
        .create_definition(&c, &pb_ref(org, pb), body)
        .await?;
    Ok((StatusCode::CREATED, Json(out)))
}

#[derive(serde::Deserialize)]
struct TypeQuery {
    #[serde(rename = "type")]
    def_type: Option<String>,
}

async fn list_definitions(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    query: Result<Query<TypeQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<DefinitionList>> {
    let Query(query) = query.map_err(query_problem)?;
    Ok(Json(
        s.service
            .list_definitions(&c, &pb_ref(org, pb), query.def_type.as_deref())
            .await?,
    ))
}

pub(crate) fn query_problem(rejection: axum::extract::rejection::QueryRejection) -> Problem {
    Problem::invalid_request(vec![ProblemIssue::field(
        "/query",
        format!("The query is not valid: {}.", rejection.body_text()),
    )])
}

/// The query of `get_definition`: one saved version instead of the latest.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct DefinitionQuery {
    version: Option<String>,
}

async fn get_definition(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, def_type, name)): Path<(String, String, String, String)>,
    query: Result<Query<DefinitionQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<DefinitionOut>> {
    let Query(query) = query.map_err(query_problem)?;
    let pb = pb_ref(org, pb);
    let Some(text) = query.version.filter(|v| !v.is_empty()) else {
        return Ok(Json(
            s.service.get_definition(&c, &pb, &def_type, &name).await?,
        ));
    };
    let version = text
        .parse::<i64>()
        .ok()
        .filter(|v| *v >= 1)
        .ok_or_else(|| {
            Problem::invalid_request(vec![ProblemIssue::field(
                "/query/version",
                format!("version {text:?} is not a version number: versions count from 1."),
            )])
        })?;
    Ok(Json(
        s.service
            .get_definition_version(&c, &pb, &def_type, &name, version)
            .await?,
    ))
}

async fn list_definition_versions(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, def_type, name)): Path<(String, String, String, String)>,
) -> Answer<Json<DefinitionVersions>> {
    Ok(Json(
        s.service
            .list_definition_versions(&c, &pb_ref(org, pb), &def_type, &name)
            .await?,
    ))
}

async fn check_definition(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    Body(body): Body<CreateDefinition>,
) -> Answer<Json<DefinitionCheck>> {
    Ok(Json(
        s.service
            .check_definition(&c, &pb_ref(org, pb), body)
            .await?,
    ))
}

async fn get_caller(State(s): State<AppState>, Authed(c): Authed) -> Json<CallerOut> {
    Json(s.service.get_caller(&c))
}

async fn update_definition(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, def_type, name)): Path<(String, String, String, String)>,
    Body(body): Body<UpdateDefinition>,
) -> Answer<Json<DefinitionOut>> {
    Ok(Json(
        s.service
            .update_definition(&c, &pb_ref(org, pb), &def_type, &name, body)
            .await?,
    ))
}

async fn retire_definition(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, def_type, name)): Path<(String, String, String, String)>,
) -> Answer<Json<DefinitionOut>> {
    Ok(Json(
        s.service
            .retire_definition(&c, &pb_ref(org, pb), &def_type, &name)
            .await?,
    ))
}

async fn publish_event(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    Body(body): Body<EventIn>,
) -> Answer<(StatusCode, Json<EventOut>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.service.publish_event(&c, &pb_ref(org, pb), body).await?),
    ))
}

async fn send_run_event(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, run_id)): Path<(String, String, String)>,
    Body(body): Body<EventIn>,
) -> Answer<(StatusCode, Json<RunEventOut>)> {
    let out = s
        .service
        .send_run_event(&c, &pb_ref(org, pb), &run_id, body)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(out)))
}

async fn list_events(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    query: Result<Query<EventQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<EventList>> {
    let Query(query) = query.map_err(query_problem)?;
    Ok(Json(
        s.service
            .list_playbook_events(&c, &pb_ref(org, pb), query)
            .await?,
    ))
}

async fn get_event(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, event_id)): Path<(String, String, String)>,
) -> Answer<Json<EventOut>> {
    Ok(Json(
        s.service.get_event(&c, &pb_ref(org, pb), &event_id).await?,
    ))
}

async fn run_definition(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, def_type, name)): Path<(String, String, String, String)>,
    Body(body): Body<RunDefinition>,
) -> Response {
    match s
        .service
        .run_definition(&c, &pb_ref(org, pb), &def_type, &name, body)
        .await
    {
        Ok(RunAnswer::Ended(run)) => (StatusCode::OK, Json(run)).into_response(),
        Ok(RunAnswer::Started(run)) => (StatusCode::ACCEPTED, Json(run)).into_response(),
        Ok(RunAnswer::Rejected(problem)) | Err(problem) => ProblemAnswer(problem).into_response(),
    }
}

async fn get_run(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, run_id)): Path<(String, String, String)>,
) -> Answer<Json<RunOut>> {
    Ok(Json(
        s.service.get_run(&c, &pb_ref(org, pb), &run_id).await?,
    ))
}

async fn list_runs(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    query: Result<Query<RunQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<RunList>> {
    let Query(query) = query.map_err(query_problem)?;
    Ok(Json(
        s.service.list_runs(&c, &pb_ref(org, pb), query).await?,
    ))
}

async fn cancel_run(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, run_id)): Path<(String, String, String)>,
    Body(body): Body<CancelRun>,
) -> Answer<Json<RunOut>> {
    Ok(Json(
        s.service
            .cancel_run(&c, &pb_ref(org, pb), &run_id, body)
            .await?,
    ))
}

async fn list_requests(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    query: Result<Query<RequestQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<Json<RequestList>> {
    let Query(query) = query.map_err(query_problem)?;
    Ok(Json(
        s.service.list_requests(&c, &pb_ref(org, pb), query).await?,
    ))
}

async fn answer_interaction(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, request_id)): Path<(String, String, String)>,
    Body(body): Body<AnswerInteraction>,
) -> Answer<Json<RequestOut>> {
    Ok(Json(
        s.service
            .answer_interaction(&c, &pb_ref(org, pb), &request_id, body)
            .await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::Place;

    /// A request's log lines name the org, playbook and run its path names, as far as it goes.
    #[test]
    fn a_path_names_its_org_playbook_and_run() {
        assert_eq!(
            Place::of("/v1/orgs/acme/playbooks/ops/runs/r-1/cancel"),
            Place {
                org: Some("acme"),
                playbook: Some("ops"),
                run_id: Some("r-1"),
            }
        );
        assert_eq!(
            Place::of("/v1/orgs/acme/playbooks/ops/definitions/workflow/w"),
            Place {
                org: Some("acme"),
                playbook: Some("ops"),
                run_id: None,
            }
        );
        assert_eq!(
            Place::of("/v1/orgs/acme/models"),
            Place {
                org: Some("acme"),
                ..Place::default()
            }
        );
        assert_eq!(Place::of("/metrics"), Place::default());
        assert_eq!(Place::of("/v1/orgs/"), Place::default());
    }
}
