//! Tool servers, as the reasoning page's "Tools" sections and the supplement's configuration
//! describe them: the operator's `[[tool_servers]]` ([`config`]), an MCP client on `rmcp` that
//! opens a server, lists its tools and calls one ([`client`]), the names tools reach the model
//! under ([`naming`]), what the model reads of a result and the scrubbing of a server's secrets
//! ([`content`]), and the limits on calls ([`limits`]).
//!
//! **Architecture Invariant:** nothing but this crate speaks to a tool server.
//!
//! Servers over `https` are reached with rustls on its ring provider (the one the rest of the
//! build uses, so no second crypto library is built) and the machine's trusted roots.

pub mod client;
pub mod config;
pub mod content;
pub mod limits;
pub mod naming;

pub use client::{
    CallBecause, CallOutcome, Connection, ListedTool, RUN_ID_META_KEY, ServerBecause,
    ServerFailure, install_tls_provider, open,
};
pub use config::{ConfigError, ToolServerConfig, ToolServers, Transport};
