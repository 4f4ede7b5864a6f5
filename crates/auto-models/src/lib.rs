//! Providers for the reasoning run: one adapter per wire protocol (Anthropic Messages, OpenAI
//! Chat Completions and the OpenAI-compatible gateways, Azure OpenAI, Google Gemini
//! `generateContent` on the Gemini API and on Vertex AI, Claude on Vertex AI, Amazon Bedrock
//! Converse signed with SigV4), the
//! operator's configuration of providers, gateways and allowed models, and [`Providers::call`],
//! which sends one model call within its bound, retries what may be retried, and returns either a
//! normalised [`ModelAnswer`] or a [`ModelFailure`] that [`rejection_for`] turns into the run's
//! rejection.
//!
//! Nothing else in the workspace speaks to a provider.

mod call;
mod catalog;
mod config;
mod failure;
mod limits;
mod options;
mod sigv4;
mod types;
mod wire;

pub use call::CallOptions;
pub use catalog::{Catalog, ModelFacts, OfferedModel};
pub use config::{ConfigError, ModelRef, Providers, WireProtocol};
pub use failure::{
    FailureBecause, ModelFailure, RejectionKind, RejectionReason, RunRejection, rejection_for,
};
pub use limits::{
    MODEL_CALL_BOUND_BASE_MS, MODEL_CALL_BOUND_PER_OUTPUT_TOKEN_MS, MODEL_CALL_RETRIES_MAX,
    WARNINGS_MAX, model_call_bound,
};
pub use types::{
    FinishReason, Message, ModelAnswer, ModelRequest, OutputContract, ReasoningEffort, Settings,
    ToolCall, ToolSpec, Usage,
};
