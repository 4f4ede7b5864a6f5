//! Problem documents: the one type of `auto-problem`, which the engine builds a workflow's
//! rejection with, under the path the runtime's modules have always used.

pub use auto_problem::*;
