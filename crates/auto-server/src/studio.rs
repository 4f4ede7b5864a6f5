//! The Studio: the web pages people read, run and answer their playbooks with, served from
//! the binary on the API's port (`/studio/`, and `/` leads there).
//!
//! The pages are built from `studio/` (TypeScript, bundled by Vite) into `studio/dist`, which
//! is committed and embedded here at compile time, so `cargo build` alone gives a working
//! Studio on a machine without node, and nothing is fetched from elsewhere at run time. CI
//! builds `studio/` again and fails when the committed `dist` differs from its sources.
//!
//! The assets need no key: they hold no data. Every read and change the pages make goes
//! through the API with the person's key, so the Studio reaches nothing the API refuses.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use include_dir::{Dir, include_dir};

use crate::http::{AppState, ProblemAnswer};
use crate::problem::Problem;

/// The built pages.
static DIST: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../studio/dist");

/// Where the Studio is served.
pub const STUDIO_PATH: &str = "/studio/";

/// What a page may load: only what this server serves. Mermaid writes its SVG with inline
/// styles, so styles may be inline; scripts may not.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to(STUDIO_PATH) }))
        .route("/studio", get(|| async { Redirect::to(STUDIO_PATH) }))
        .route(STUDIO_PATH, get(|| async { asset("index.html") }))
        .route(
            "/studio/{*path}",
            get(|Path(path): Path<String>| async move { asset(&path) }),
        )
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        Some("woff") => "font/woff",
        Some("ttf") => "font/ttf",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn asset(path: &str) -> Response {
    let Some(file) = DIST.get_file(path) else {
        return ProblemAnswer(Problem::not_found(format!(
            "The Studio has no page or file {STUDIO_PATH}{path}."
        )))
        .into_response();
    };
    // Files under assets/ carry a hash of their content in their name: they never change.
    let cache = if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = (StatusCode::OK, file.contents()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
