//! The limits of the reasoning page's "Tools" sections, each a named constant quoting the page.

/// "the server's bound of a tool call, 30 seconds unless the operator sets another"; "One call:
/// 30 seconds. A tool error that counts as a server failure."
pub const TOOL_CALL_TIMEOUT_MS_DEFAULT: u64 = 30_000;

/// "A 429 from a tool server: Waited out when Retry-After asks for at most 10 seconds.
/// Otherwise a server failure."
pub const RETRY_AFTER_MS_MAX: u64 = 10_000;

/// "Server failures in one run: 5. The run ends with because: \"server_failed\"."
pub const SERVER_FAILURES_MAX: u32 = 5;

/// "A run makes at most 25 calls; any further call is refused."
pub const RUN_CALLS_MAX: u32 = 25;

/// "A call that sends more than 16 KiB of arguments is refused."
pub const ARGUMENTS_BYTES_MAX: usize = 16 * 1024;

/// "A third call of the same tool with the same arguments is refused": two are made.
pub const IDENTICAL_CALLS_MAX: u32 = 2;

/// "The tool's description is cut to 4 KiB."
pub const DESCRIPTION_BYTES_MAX: usize = 4 * 1024;

/// "A name longer than 64 characters ... gets an 8-character hash."
pub const MODEL_TOOL_NAME_CHARS_MAX: usize = 64;

/// "... gets an 8-character hash."
pub const NAME_HASH_CHARS: usize = 8;

/// "The bound of a run that calls tools, 10 minutes, counts from its start"; "The whole run:
/// 10 minutes, or one model call's limit when that is longer."
pub const RUN_BOUND_MS: u64 = 600_000;

/// The largest tool result the transport reads; a larger one fails the call as `too_large`
/// ("too_large for a result larger than the transport reads"). The page sets no figure; this is
/// rmcp's own default for one JSON response, raised so a 10 MB result is read.
pub const RESULT_BYTES_MAX: usize = 32 * 1024 * 1024;
