//! The limits of a model call, with the reasoning page's words.

use std::time::Duration;

/// "One model call: 60 seconds plus 25 ms for every token of max_output_tokens."
pub const MODEL_CALL_BOUND_BASE_MS: u64 = 60_000;

/// "... plus 25 ms for every token of max_output_tokens."
pub const MODEL_CALL_BOUND_PER_OUTPUT_TOKEN_MS: u64 = 25;

/// "That time includes up to two retries of a call that failed with HTTP 408, 409, 429 or 5xx,
/// or could not connect."
pub const MODEL_CALL_RETRIES_MAX: u32 = 2;

/// The record's warnings: "What the provider said it ignored or changed ... at most 20".
pub const WARNINGS_MAX: usize = 20;

/// The wait before a retry when the provider gave no hint; doubled on the second retry.
pub const RETRY_BACKOFF_BASE_MS: u64 = 500;

/// The most of the provider's own words a failure's detail quotes.
pub const PROVIDER_WORDS_CHARS_MAX: usize = 300;

/// The bound of one model call, retries included: "85.6 seconds at the default 1,024".
pub fn model_call_bound(max_output_tokens: u32) -> Duration {
    Duration::from_millis(
        MODEL_CALL_BOUND_BASE_MS
            + MODEL_CALL_BOUND_PER_OUTPUT_TOKEN_MS * u64::from(max_output_tokens),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_bound_is_the_pages_85_6_seconds() {
        assert_eq!(model_call_bound(1024), Duration::from_millis(85_600));
    }
}
