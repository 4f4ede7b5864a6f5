//! Any text as a reasoning function's source: the checker never panics, and a refusal keeps
//! the page's form (at most 20 issues in line order, each once, then the count line).

#![no_main]

use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    match Checkers::standard().check(DefinitionType::Reasoning, source) {
        Ok(_) | Err(CheckError::NotSupported(_)) => {}
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
