//! Test partners for the runtime's own tests: provider servers on loopback that speak the real
//! wire protocols (Anthropic Messages, OpenAI Chat Completions and the gateways that copy it,
//! Google Gemini `generateContent`, Azure OpenAI, Gemini and Claude on Vertex AI, Amazon Bedrock
//! Converse), answer from a script each test writes, and record every
//! request they receive so the test can assert on its headers and JSON body.
//!
//! A double is a real HTTP server: the code under test goes through its HTTP client, its
//! timeouts and its retries exactly as it would against the provider.
//!
//! [`McpDouble`] is a scripted MCP tool server (rmcp's own server) for the tool loop's failures.
//!
//! [`Aimock`] starts the third-party emulator of the same APIs, for the suites that run against
//! it too.
//!
//! [`mcp_python`] and [`mcp_inspector`] find the MCP project's own clients (the Python SDK,
//! the Inspector's CLI), to drive the runtime's MCP server as users' agents do.
//!
//! [`standard_webhooks_python`] finds the Standard Webhooks project's own verifier, to check
//! the signatures of webhook deliveries with the code receivers run.
//!
//! [`harness`] is the HTTP side of the server's and the binary's end-to-end tests: a client of
//! a running server that saves definitions, runs them and waits for their ending.

mod aimock;
mod everything;
pub mod harness;
mod mcp;
mod mcp_clients;
mod provider;

pub use aimock::{AIMOCK_VARIABLE, Aimock};
pub use everything::{EVERYTHING_VARIABLE, Everything};
pub use mcp::{HttpFailure, McpDouble, RecordedCall};
pub use mcp_clients::{
    MCP_INSPECTOR_VARIABLE, MCP_PYTHON_VARIABLE, OPENAPI_CLIENTS_VARIABLE,
    STANDARD_WEBHOOKS_VARIABLE, mcp_inspector, mcp_python, openapi_clients,
    standard_webhooks_python,
};
pub use provider::{ProviderDouble, ProviderKind, RecordedRequest, Reply, ScriptedToolCall};
