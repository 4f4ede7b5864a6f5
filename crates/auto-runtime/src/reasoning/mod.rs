//! A reasoning run's functional core and what it reads and writes, apart from the store, the
//! providers and the tool servers: the run's history typed (`history`), the decisions
//! (`core` for a run's start, its one model call and its endings; `steps` for the steps of a
//! run with tools; `ledger` for the limits on its tool calls), the endings (`endings`) and
//! the data of its events (`record`). The shells that perform its commands are
//! `reasoning_runs` and `reasoning_tools`.

pub(crate) mod core;
pub(crate) mod endings;
pub(crate) mod history;
pub(crate) mod ledger;
pub(crate) mod record;
pub(crate) mod steps;
#[cfg(test)]
mod tests;
