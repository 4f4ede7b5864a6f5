//! The deployment's limits on runs, as the server's configuration sets them (`[limits]`,
//! `[scheduler]` and the pages' environment variables); reading them is the server's.

/// "The server's regular pass over waiting work, every second by default."
pub const SWEEP_MS_DEFAULT: u64 = 1_000;
/// The shortest sweep interval the configuration takes.
pub const SWEEP_MS_MIN: u64 = 10;
/// How long a server holds the work it claimed before another may take it, by default: the
/// longest a run waits for a server that stopped without a word.
pub const WORK_LEASE_MS_DEFAULT: u64 = 30_000;
/// The shortest lease the configuration takes: a step's commit, with its retries over a
/// passing store fault (about 3 seconds), fits in it with room to spare only past this.
pub const WORK_LEASE_MS_MIN: u64 = 1_000;

/// The deployment's limits on workflow runs (workflow page, "Limits"), from `[limits]` and
/// the environment variables of the page, which override them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// `WORKFLOW_MAX_DURATION`: the longest a run may last.
    pub workflow_max_duration_ms: u64,
    /// `WORKFLOW_MAX_OPEN_CALLS`: the calls the runs under one top workflow wait for at once.
    pub workflow_max_open_calls: u32,
    /// `[scheduler] sweep_ms`: the interval of the sweep over triggers and listening tasks.
    pub sweep_ms: u64,
    /// `[scheduler] clock_offset_ms`: the shift of the clock schedules read (tests only).
    pub clock_offset_ms: i64,
    /// `[scheduler] lease_ms`: how long a server holds the work it claimed.
    pub work_lease_ms: u64,
}

/// "Calls waiting under one run: 1,000 under the top workflow".
pub const WORKFLOW_MAX_OPEN_CALLS_DEFAULT: u32 = 1_000;
/// "`WORKFLOW_MAX_OPEN_CALLS` sets 1 to 9,999".
pub const WORKFLOW_MAX_OPEN_CALLS_MAX: u32 = 9_999;
/// The environment variable of the longest run.
pub const ENV_WORKFLOW_MAX_DURATION: &str = "WORKFLOW_MAX_DURATION";
/// The environment variable of the calls waiting under one top workflow.
pub const ENV_WORKFLOW_MAX_OPEN_CALLS: &str = "WORKFLOW_MAX_OPEN_CALLS";

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            workflow_max_duration_ms: auto_engine::workflow::RUN_DURATION_MS_DEFAULT,
            workflow_max_open_calls: WORKFLOW_MAX_OPEN_CALLS_DEFAULT,
            sweep_ms: SWEEP_MS_DEFAULT,
            clock_offset_ms: 0,
            work_lease_ms: WORK_LEASE_MS_DEFAULT,
        }
    }
}
