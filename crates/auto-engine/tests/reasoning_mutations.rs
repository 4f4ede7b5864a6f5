//! Damaged documents: each case of the corpus, cut, repeated and sprinkled with the characters
//! YAML and Liquid give meaning to, is checked without a panic, and a refusal keeps the page's
//! form (at most 20 issues in line order, each once, then the count line).
//!
//! The damage is drawn from a fixed seed, so a failure names a document that can be replayed.

use std::path::Path;

use auto_engine::definitions::{CheckError, Checkers, DefinitionType};

/// The seed of the damage; change it to explore, keep it to replay.
const SEED: u64 = 0x05ee_d0fc_a5e5;
/// Damaged documents made from each case.
const MUTATIONS_PER_CASE: usize = 40;
/// Cases larger than this (the limit cases) are left to the corpus: damaging them tells
/// nothing new and costs time.
const CASE_BYTES_MAX: usize = 4_096;
/// What a damaged document may gain: the characters that open, close or quote something.
const SPECIALS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    "- ",
    "&a ",
    "*a",
    "!t ",
    "#",
    "'",
    "\"",
    "|",
    ">",
    "\n",
    "\t",
    "  ",
    "{{",
    "}}",
    "{%",
    "%}",
    "{% system %}",
    "{% endsystem %}",
    "{% if x %}",
    "---\n",
    "~",
    "é",
    "\u{feff}",
    "\r\n",
    ".inf",
    "1e400",
    "-1",
    "null",
    "/",
];

/// xorshift64*: small, deterministic, and good enough to pick places.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The nearest character boundary at or before `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn damage(source: &str, draw: &mut Draw) -> String {
    let mut text = source.to_owned();
    for _ in 0..=draw.below(3) {
        let at = boundary(&text, draw.below(text.len() + 1));
        match draw.below(4) {
            0 => text.insert_str(at, SPECIALS[draw.below(SPECIALS.len())]),
            1 => {
                let end = boundary(&text, at + draw.below(12));
                text.replace_range(at..end, "");
            }
            2 => {
                let end = boundary(&text, at + draw.below(40));
                let copied = text[at..end].to_owned();
                text.insert_str(end, &copied);
            }
            _ => text.truncate(at),
        }
    }
    text
}

fn assert_page_form(source: &str, issues: &[auto_doc::Issue]) {
    assert!(!issues.is_empty(), "a refusal without issues:\n{source}");
    assert!(issues.len() <= 21, "more than 20 issues shown:\n{source}");
    for pair in issues.windows(2) {
        assert!(
            pair[0].line <= pair[1].line,
            "issues out of line order {:?}:\n{source}",
            issues
        );
        assert_ne!(pair[0], pair[1], "an issue shown twice:\n{source}");
    }
    for issue in issues {
        assert!(issue.line >= 1, "an issue at line 0:\n{source}");
        assert!(
            issue.message().starts_with(&format!("Line {}", issue.line)),
            "{}",
            issue.message()
        );
    }
}

#[test]
fn damaged_documents_are_refused_in_the_page_form_without_a_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reasoning");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    cases.sort();
    let checkers = Checkers::standard();
    let mut draw = Draw(SEED);
    let mut checked = 0;
    for case in &cases {
        let source = std::fs::read_to_string(case).expect("a case is UTF-8");
        if source.len() > CASE_BYTES_MAX {
            continue;
        }
        for _ in 0..MUTATIONS_PER_CASE {
            let damaged = damage(&source, &mut draw);
            match checkers.check(DefinitionType::Reasoning, &damaged) {
                Ok(_) => {}
                Err(CheckError::Issues(issues)) => assert_page_form(&damaged, &issues),
                Err(other) => panic!("{other:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 4_000, "only {checked} damaged documents");
}
