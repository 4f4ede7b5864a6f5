//! A tool call as the operation's HTTP request, and the operation's answer as a tool result.
//!
//! A call goes through the same router as an HTTP request, in process: the same decoding with
//! problems at pointers, the same bearer key check, the same handlers and service methods. So
//! MCP cannot answer differently from HTTP, and an operation added to the table and the router
//! is a working tool with no code here.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Map, Value};

use super::tools::{Reach, argument_of_parameter, named_by_endpoint};
use crate::openapi::Operation;
use crate::problem::{Problem, ProblemIssue};

/// The playbook an endpoint names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaybookScope {
    pub org: String,
    pub playbook: String,
}

/// Builds the operation's request from a tool call's arguments: path parameters and query
/// parameters are taken out of the arguments by name, and what is left is the body.
pub(crate) fn request(
    op: &Operation,
    scope: Option<&PlaybookScope>,
    arguments: JsonObject,
    authorization: Option<&str>,
) -> Result<Request<Body>, Problem> {
    let mut arguments = arguments;
    let reach = if scope.is_some() {
        Reach::Playbook
    } else {
        Reach::Server
    };
    let mut issues = Vec::new();
    let mut path = String::new();
    for segment in op.path.split('/').skip(1) {
        path.push('/');
        let Some(parameter) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
            path.push_str(segment);
            continue;
        };
        let value = match (scope, parameter) {
            (Some(scope), "org") if named_by_endpoint(reach, parameter) => Some(scope.org.clone()),
            (Some(scope), "pb") if named_by_endpoint(reach, parameter) => {
                Some(scope.playbook.clone())
            }
            _ => take_string(
                &mut arguments,
                argument_of_parameter(parameter),
                &mut issues,
            ),
        };
        path.push_str(&percent_encode(value.as_deref().unwrap_or("-")));
    }
    let mut query = Vec::new();
    for (name, _) in op.query {
        if let Some(value) = take_query(&mut arguments, name, &mut issues) {
            query.push(format!(
                "{}={}",
                percent_encode(name),
                percent_encode(&value)
            ));
        }
    }
    if op.request.is_none() {
        issues.extend(arguments.keys().map(|name| {
            ProblemIssue::field(
                format!("/{name}"),
                format!("The argument {name} is not known."),
            )
        }));
    }
    if !issues.is_empty() {
        return Err(Problem::invalid_request(issues));
    }
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query.join("&"));
    }
    let mut builder = Request::builder()
        .method(op.method.to_ascii_uppercase().as_str())
        .uri(path);
    if let Some(authorization) = authorization {
        builder = builder.header(header::AUTHORIZATION, authorization);
    }
    if let Some(flag) = op.flag {
        arguments.insert(flag.to_owned(), Value::Bool(true));
    }
    let body = if op.request.is_some() {
        builder = builder.header(header::CONTENT_TYPE, "application/json");
        Body::from(Value::Object(arguments).to_string())
    } else {
        Body::empty()
    };
    builder
        .body(body)
        .map_err(|e| Problem::internal(&format!("cannot build the request of a tool call: {e}")))
}

/// A required string argument, taken out of the arguments.
fn take_string(
    arguments: &mut JsonObject,
    name: &str,
    issues: &mut Vec<ProblemIssue>,
) -> Option<String> {
    match arguments.remove(name) {
        Some(Value::String(text)) => Some(text),
        None | Some(Value::Null) => {
            issues.push(ProblemIssue::field(
                format!("/{name}"),
                format!("The argument {name} is required."),
            ));
            None
        }
        Some(other) => {
            issues.push(ProblemIssue::field(
                format!("/{name}"),
                format!("The argument {name} must be a string, not {other}."),
            ));
            None
        }
    }
}

/// An optional query argument: a string, or a number or boolean as its text.
fn take_query(
    arguments: &mut JsonObject,
    name: &str,
    issues: &mut Vec<ProblemIssue>,
) -> Option<String> {
    match arguments.remove(name)? {
        Value::Null => None,
        Value::String(text) => Some(text),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        other => {
            issues.push(ProblemIssue::field(
                format!("/{name}"),
                format!("The argument {name} must be a string, not {other}."),
            ));
            None
        }
    }
}

/// Percent-encodes everything but the unreserved characters of RFC 3986, so an argument is
/// always one path segment or one query value, whatever it holds.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The tool result of an operation's answer: the response body as structured content, or a
/// rejection's problem document as the text of a result with `isError`.
///
/// The problem document is not also given as structured content: the tool's output schema is
/// the success's, and clients check structured content against it.
pub(crate) fn result(status: StatusCode, body: &[u8]) -> CallToolResult {
    // The server's own answer, which may hold values up to 512 levels deep.
    let value: Option<Value> = crate::http::parse_json(body).ok();
    if status.is_client_error() || status.is_server_error() {
        let text = match value {
            Some(problem) => problem.to_string(),
            None => String::from_utf8_lossy(body).into_owned(),
        };
        return CallToolResult::error(vec![ContentBlock::text(text)]);
    }
    match value {
        Some(value @ Value::Object(_)) => CallToolResult::structured(value),
        // An answer without a body (such as 202 Accepted) is an empty object.
        _ if body.is_empty() => CallToolResult::structured(Value::Object(Map::new())),
        _ => CallToolResult::success(vec![ContentBlock::text(
            String::from_utf8_lossy(body).into_owned(),
        )]),
    }
}

/// A rejection made before the operation ran, as a tool result.
pub(crate) fn problem_result(problem: &Problem) -> CallToolResult {
    let text = serde_json::to_string(problem).unwrap_or_else(|_| problem.detail.clone());
    CallToolResult::error(vec![ContentBlock::text(text)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::OPERATIONS;
    use axum::http::Method;
    use serde_json::json;

    fn op(name: &str) -> &'static Operation {
        OPERATIONS.iter().find(|op| op.name == name).unwrap()
    }

    fn arguments(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn path_and_query_arguments_leave_the_body() {
        let request = request(
            op("list_playbook_events"),
            None,
            arguments(json!({"org": "acme", "playbook": "main", "limit": 5, "type": "a b"})),
            Some("Bearer k"),
        )
        .unwrap();
        assert_eq!(request.method(), Method::GET);
        assert_eq!(
            request.uri().to_string(),
            "/v1/orgs/acme/playbooks/main/events?type=a%20b&limit=5"
        );
        assert_eq!(request.headers()[header::AUTHORIZATION], "Bearer k");
    }

    #[test]
    fn the_scope_names_the_playbook_and_an_argument_cannot_change_it() {
        let scope = PlaybookScope {
            org: "acme".into(),
            playbook: "main".into(),
        };
        let request = request(
            op("get_definition"),
            Some(&scope),
            arguments(json!({"type": "workflow", "name": "a/../b"})),
            None,
        )
        .unwrap();
        assert_eq!(
            request.uri().path(),
            "/v1/orgs/acme/playbooks/main/definitions/workflow/a%2F..%2Fb"
        );
        let problem = request_problem(
            "get_definition",
            Some(&scope),
            json!({"type": "workflow", "name": "x", "org": "other"}),
        );
        assert_eq!(problem.issues[0].pointer, "/org");
    }

    fn request_problem(name: &str, scope: Option<&PlaybookScope>, value: Value) -> Problem {
        request(op(name), scope, arguments(value), None).unwrap_err()
    }

    #[test]
    fn missing_and_mistyped_path_arguments_are_issues_at_their_pointers() {
        let problem = request_problem("get_definition", None, json!({"org": 1, "type": "w"}));
        let pointers: Vec<_> = problem.issues.iter().map(|i| i.pointer.as_str()).collect();
        assert_eq!(pointers, ["/org", "/playbook", "/name"]);
        assert_eq!(problem.status, 422);
    }

    #[test]
    fn a_rejection_is_an_error_result_whose_text_is_the_problem() {
        let problem = Problem::not_found("Nothing here.");
        let body = serde_json::to_vec(&problem).unwrap();
        let result = result(StatusCode::NOT_FOUND, &body);
        assert_eq!(result.is_error, Some(true));
        let text = &result.content[0].as_text().unwrap().text;
        let back: Problem = serde_json::from_str(text).unwrap();
        assert_eq!(back, problem);
        let ok = super::result(StatusCode::CREATED, br#"{"id":"acme"}"#);
        assert_eq!(ok.structured_content, Some(json!({"id": "acme"})));
        assert_eq!(ok.is_error, Some(false));
    }
}
