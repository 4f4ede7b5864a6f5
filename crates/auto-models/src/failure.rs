//! [`ModelFailure`]: why a model call did not give a usable answer, and [`rejection_for`], the
//! one place that turns it into the run's rejection (reason, kind, because, HTTP status) as the
//! reasoning page's "How a run ends" lists them.

use serde::{Deserialize, Serialize};

use crate::types::{FinishReason, Usage};

/// `model_call_failed`'s `because`, the page's twelve values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureBecause {
    Cancelled,
    ContentRefused,
    CredentialsRejected,
    DefinitionInvalid,
    Interrupted,
    ModelNotAllowed,
    OutputInvalid,
    ProviderNotConfigured,
    ProviderUnavailable,
    RateLimited,
    RequestTooLong,
    TimedOut,
}

impl FailureBecause {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureBecause::Cancelled => "cancelled",
            FailureBecause::ContentRefused => "content_refused",
            FailureBecause::CredentialsRejected => "credentials_rejected",
            FailureBecause::DefinitionInvalid => "definition_invalid",
            FailureBecause::Interrupted => "interrupted",
            FailureBecause::ModelNotAllowed => "model_not_allowed",
            FailureBecause::OutputInvalid => "output_invalid",
            FailureBecause::ProviderNotConfigured => "provider_not_configured",
            FailureBecause::ProviderUnavailable => "provider_unavailable",
            FailureBecause::RateLimited => "rate_limited",
            FailureBecause::RequestTooLong => "request_too_long",
            FailureBecause::TimedOut => "timed_out",
        }
    }
}

/// A model call that gave no usable answer.
///
/// Invariant: `detail` never holds a credential or a request body; it names the provider, the
/// HTTP status and what it means, and quotes the provider's words only from an error message
/// field, cut to a bounded length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFailure {
    pub because: FailureBecause,
    pub provider: String,
    pub status: Option<u16>,
    pub detail: String,
    pub retry_after_ms: Option<u64>,
    /// The usage of an answer the run could not use (a refusal, a cut-off JSON answer).
    pub usage: Option<Usage>,
    pub finish_reason: Option<FinishReason>,
    pub raw_finish_reason: Option<String>,
    /// For `provider_not_configured`: whether other providers are configured, which makes the
    /// kind `model_not_offered`.
    pub other_providers_configured: bool,
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
    /// For `provider_unavailable`: the provider's TLS certificate is not trusted, which the
    /// operator must mend; no retry does.
    pub certificate_untrusted: bool,
}

impl ModelFailure {
    pub(crate) fn new(
        because: FailureBecause,
        provider: &str,
        status: Option<u16>,
        detail: String,
    ) -> ModelFailure {
        ModelFailure {
            because,
            provider: provider.to_owned(),
            status,
            detail,
            retry_after_ms: None,
            usage: None,
            finish_reason: None,
            raw_finish_reason: None,
            other_providers_configured: false,
            cost_usd: None,
            duration_ms: 0,
            certificate_untrusted: false,
        }
    }
}

impl std::fmt::Display for ModelFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.because.as_str(), self.detail)
    }
}

impl std::error::Error for ModelFailure {}

/// The rejection's reason, with its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionReason {
    InvalidInput,
    Conflict,
    Unavailable,
    Cancelled,
}

impl RejectionReason {
    /// "`invalid_input` 422 ... `conflict` 409, `unavailable` 503, `cancelled` 409".
    pub fn http_status(self) -> u16 {
        match self {
            RejectionReason::InvalidInput => 422,
            RejectionReason::Conflict | RejectionReason::Cancelled => 409,
            RejectionReason::Unavailable => 503,
        }
    }
}

/// The rejection's kind, where the page gives one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionKind {
    Unworkable,
    ModelNotOffered,
}

/// The run's rejection for a failed model call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRejection {
    pub reason: RejectionReason,
    pub kind: Option<RejectionKind>,
    pub because: FailureBecause,
    pub http_status: u16,
    pub detail: String,
    /// "with the seconds to wait when it said".
    pub retry_after_seconds: Option<u64>,
}

/// The run's rejection for a model call that failed before the run called any tool.
///
/// | because | reason | kind |
/// |---|---|---|
/// | model_not_allowed | unavailable | model_not_offered |
/// | provider_not_configured | unavailable | model_not_offered when others are configured |
/// | credentials_rejected, rate_limited, provider_unavailable, timed_out, interrupted | unavailable | - |
/// | output_invalid (answer cut off at max_output_tokens) | conflict | unworkable |
/// | output_invalid (otherwise) | unavailable | - |
/// | request_too_long, definition_invalid | conflict | unworkable |
/// | content_refused | invalid_input | - |
/// | cancelled | cancelled | - |
pub fn rejection_for(failure: &ModelFailure) -> RunRejection {
    use FailureBecause as B;
    let (reason, kind, suffix) = match failure.because {
        B::ModelNotAllowed => (
            RejectionReason::Unavailable,
            Some(RejectionKind::ModelNotOffered),
            "",
        ),
        B::ProviderNotConfigured => (
            RejectionReason::Unavailable,
            failure
                .other_providers_configured
                .then_some(RejectionKind::ModelNotOffered),
            "",
        ),
        B::CredentialsRejected | B::RateLimited | B::Interrupted => {
            (RejectionReason::Unavailable, None, "")
        }
        // "A rejection for an untrusted certificate says that the operator must act": not to
        // try again later.
        B::ProviderUnavailable if failure.certificate_untrusted => {
            (RejectionReason::Unavailable, None, "")
        }
        B::ProviderUnavailable | B::TimedOut => {
            (RejectionReason::Unavailable, None, ": try again later")
        }
        B::OutputInvalid if failure.finish_reason == Some(FinishReason::Length) => (
            RejectionReason::Conflict,
            Some(RejectionKind::Unworkable),
            ": raise config.max_output_tokens",
        ),
        B::OutputInvalid => (RejectionReason::Unavailable, None, ": try again"),
        B::RequestTooLong | B::DefinitionInvalid => (
            RejectionReason::Conflict,
            Some(RejectionKind::Unworkable),
            "",
        ),
        B::ContentRefused => (RejectionReason::InvalidInput, None, ""),
        B::Cancelled => (RejectionReason::Cancelled, None, ""),
    };
    RunRejection {
        reason,
        kind,
        because: failure.because,
        http_status: reason.http_status(),
        detail: format!("{}{suffix}", failure.detail),
        retry_after_seconds: failure.retry_after_ms.map(|ms| ms.div_ceil(1000)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(because: FailureBecause) -> ModelFailure {
        ModelFailure::new(because, "anthropic", None, "anthropic: detail".to_owned())
    }

    /// Every `because` against the page's "How a run ends": reason, kind and HTTP status.
    #[test]
    fn every_failure_maps_to_the_pages_rejection() {
        use FailureBecause as B;
        use RejectionKind::{ModelNotOffered, Unworkable};
        use RejectionReason::{Cancelled, Conflict, InvalidInput, Unavailable};
        let cases = [
            (B::Cancelled, Cancelled, None, 409),
            (B::ContentRefused, InvalidInput, None, 422),
            (B::CredentialsRejected, Unavailable, None, 503),
            (B::DefinitionInvalid, Conflict, Some(Unworkable), 409),
            (B::Interrupted, Unavailable, None, 503),
            (B::ModelNotAllowed, Unavailable, Some(ModelNotOffered), 503),
            (B::OutputInvalid, Unavailable, None, 503),
            (B::ProviderNotConfigured, Unavailable, None, 503),
            (B::ProviderUnavailable, Unavailable, None, 503),
            (B::RateLimited, Unavailable, None, 503),
            (B::RequestTooLong, Conflict, Some(Unworkable), 409),
            (B::TimedOut, Unavailable, None, 503),
        ];
        for (because, reason, kind, status) in cases {
            let rejection = rejection_for(&failure(because));
            assert_eq!(
                (rejection.reason, rejection.kind, rejection.http_status),
                (reason, kind, status),
                "{because:?}"
            );
            assert_eq!(rejection.because, because);
        }
    }

    #[test]
    fn the_context_decides_two_rows() {
        let mut not_configured = failure(FailureBecause::ProviderNotConfigured);
        not_configured.other_providers_configured = true;
        assert_eq!(
            rejection_for(&not_configured).kind,
            Some(RejectionKind::ModelNotOffered)
        );
        let mut cut_off = failure(FailureBecause::OutputInvalid);
        cut_off.finish_reason = Some(FinishReason::Length);
        let rejection = rejection_for(&cut_off);
        assert_eq!(
            (rejection.reason, rejection.kind),
            (RejectionReason::Conflict, Some(RejectionKind::Unworkable))
        );
        let mut limited = failure(FailureBecause::RateLimited);
        limited.retry_after_ms = Some(1_500);
        assert_eq!(rejection_for(&limited).retry_after_seconds, Some(2));
        let mut untrusted = failure(FailureBecause::ProviderUnavailable);
        untrusted.certificate_untrusted = true;
        let rejection = rejection_for(&untrusted);
        assert_eq!(
            (rejection.reason, rejection.detail.as_str()),
            (RejectionReason::Unavailable, "anthropic: detail")
        );
        assert_eq!(
            rejection_for(&failure(FailureBecause::ProviderUnavailable)).detail,
            "anthropic: detail: try again later"
        );
    }
}
