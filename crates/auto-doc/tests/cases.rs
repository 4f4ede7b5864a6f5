//! The case corpus: each file of `tests/cases/` is read and what came of it (issues as the
//! pages render them, the value, and every pointer's place) is compared with the file beside
//! it, `NAME.EXT.expected`. A `.yaml` case is read as a workflow document (lines and columns,
//! 512 levels); a `.md` case as a reasoning function's source (front matter, lines only, 72
//! levels). Run with `UPDATE_EXPECT=1` to write the expected files from what the code does.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use auto_doc::{Issue, Issues, Located, YamlConfig, read_markdown, read_yaml};

#[test]
fn every_case_reads_as_expected() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|value| value == "1");
    let mut failures = Vec::new();
    let cases = case_files();
    assert!(
        cases.len() > 10,
        "the corpus went missing: {} cases",
        cases.len()
    );
    for case in cases {
        let actual = render_case(&case);
        let expected_path = expected_path(&case);
        if update {
            fs::write(&expected_path, &actual).expect("the expected file can be written");
            continue;
        }
        let expected = fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "--- {}\n--- expected\n{expected}--- actual\n{actual}",
                case.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases differ (UPDATE_EXPECT=1 rewrites them):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn case_files() -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut cases: Vec<PathBuf> = fs::read_dir(folder)
        .expect("tests/cases exists")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| {
            matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "md")
            )
        })
        .collect();
    cases.sort();
    cases
}

fn expected_path(case: &Path) -> PathBuf {
    let mut name = case.as_os_str().to_owned();
    name.push(".expected");
    PathBuf::from(name)
}

/// What a case gave, as text: its issues, whether the tree is complete, the value, the places.
fn render_case(case: &Path) -> String {
    let source = fs::read_to_string(case).expect("a case is UTF-8");
    let mut out = String::new();
    let (document, issues, complete) = if case.extension().is_some_and(|e| e == "md") {
        let read = read_markdown(&source, &YamlConfig::front_matter());
        writeln!(out, "# body starts at line {}", read.body_first_line).unwrap();
        (read.front_matter, read.issues, read.complete)
    } else {
        let read = read_yaml(&source, &YamlConfig::workflow());
        (read.document, read.issues, read.complete)
    };
    render_issues(&mut out, issues);
    writeln!(out, "# complete: {complete}").unwrap();
    writeln!(out, "# value").unwrap();
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(document.value()).unwrap()
    )
    .unwrap();
    render_positions(&mut out, &document);
    out
}

fn render_issues(out: &mut String, issues: Vec<Issue>) {
    writeln!(out, "# issues").unwrap();
    for issue in issues.into_iter().collect::<Issues>().sorted() {
        writeln!(out, "{issue}").unwrap();
    }
}

fn render_positions(out: &mut String, document: &Located) {
    writeln!(
        out,
        "# positions (pointer: key line:column, value line:column)"
    )
    .unwrap();
    let mut places: Vec<_> = document.positions().iter().collect();
    places.sort_by_key(|(pointer, place)| (place.value, *pointer));
    for (pointer, place) in places {
        let key = place
            .key
            .map_or("-".to_owned(), |key| format!("{}:{}", key.line, key.column));
        let value = format!("{}:{}", place.value.line, place.value.column);
        writeln!(out, "{pointer:?}: {key} {value}").unwrap();
    }
}
