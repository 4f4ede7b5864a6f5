//! The engines: definitions of every type (parse and check), and later the runs of each type.
//!
//! Architecture invariant: nothing here does I/O, reads a clock or knows about HTTP. Saving a
//! definition is `check(source) -> Checked | issues`; the service stores what passed.

pub mod computation;
pub mod definitions;
pub mod events_kept;
pub mod input;
pub mod interaction;
pub mod prediction;
pub mod provider_options;
pub mod reasoning;
pub mod recall;
pub mod workflow;
