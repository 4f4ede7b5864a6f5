//! The HTTP handlers of the tool operations (`tool_operations` in the runtime): parse, call,
//! render.

use axum::Json;
use axum::extract::{Path, Query, State};

use crate::http::ProblemAnswer;
use crate::http::{AppState, Authed, Body, pb_ref, query_problem};
use crate::tool_operations::{ExecuteOut, ExecuteTool, SearchQuery, ToolDetail, ToolServerList};

type Answer<T> = Result<Json<T>, ProblemAnswer>;

pub(crate) async fn search(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb)): Path<(String, String)>,
    query: Result<Query<SearchQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer<ToolServerList> {
    let Query(query) = query.map_err(query_problem)?;
    let pb = pb_ref(org, pb);
    Ok(Json(
        s.service
            .search_tools(&c, &pb, query.terms.as_deref())
            .await?,
    ))
}

pub(crate) async fn introspect(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, server, tool)): Path<(String, String, String, String)>,
) -> Answer<ToolDetail> {
    let pb = pb_ref(org, pb);
    Ok(Json(
        s.service.introspect_tool(&c, &pb, &server, &tool).await?,
    ))
}

pub(crate) async fn execute(
    State(s): State<AppState>,
    Authed(c): Authed,
    Path((org, pb, server, tool)): Path<(String, String, String, String)>,
    Body(body): Body<ExecuteTool>,
) -> Answer<ExecuteOut> {
    let pb = pb_ref(org, pb);
    Ok(Json(
        s.service
            .execute_tool(&c, &pb, &server, &tool, body)
            .await?,
    ))
}
