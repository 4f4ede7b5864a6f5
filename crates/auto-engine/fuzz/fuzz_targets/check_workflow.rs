//! Any text as a workflow's source, through the whole check a save runs (YAML, the DSL's
//! shape, flow, every expression, duration and schedule, the limits) and the overview drawn
//! from what passed: the checker never panics, a refusal keeps the page's form (at most 20
//! issues in line order, each once, then the count line), and an accepted document has one
//! flowchart in its overview.

#![no_main]

use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    match Checkers::standard().check(DefinitionType::Workflow, source) {
        Ok(checked) => {
            let overview = checked.generated_overview.expect("a workflow has an overview");
            assert_eq!(overview.matches("```mermaid\nflowchart TD\n").count(), 1);
        }
        Err(CheckError::NotSupported(_)) => unreachable!("workflows have a checker"),
        Err(CheckError::Issues(issues)) => {
            assert!(!issues.is_empty());
            assert!(issues.len() <= auto_doc::ISSUES_SHOWN_MAX + 1);
            for pair in issues.windows(2) {
                assert!(pair[0].line <= pair[1].line);
                assert_ne!(pair[0], pair[1]);
            }
        }
    }
});
