//! Our own corpus: each case is a template, an input and the exact output, problems or error
//! expected, in `tests/corpus/*.txt`. One runner reads them all.
//!
//! A case starts with `=== name` and has sections, each starting with `--- section`:
//! `template`; `input` (JSON, `{}` when left out); `fields` (the input schema's properties when
//! it closes them, one a line); then what is expected: `problems` (one `Line N: text` a line),
//! or `output` and optionally `system`, or `error` (`Line N, /pointer: text`). A section's text
//! ends before the next section; its last newline is not part of it, nor is the blank line that
//! separates two cases.

use std::path::Path;

use auto_template::{CheckConfig, RenderLimits, check, parse, render};

#[derive(Default, Debug)]
struct Case {
    name: String,
    file: String,
    sections: Vec<(String, String)>,
}

impl Case {
    fn get(&self, section: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|(s, _)| s == section)
            .map(|(_, t)| t.as_str())
    }
}

fn read_cases(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).expect("read a corpus file");
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    let mut cases: Vec<Case> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("=== ") {
            // The blank line that separates two cases belongs to neither.
            if let Some((_, body)) = cases.last_mut().and_then(|c| c.sections.last_mut())
                && body.ends_with("\n\n")
            {
                body.pop();
            }
            cases.push(Case {
                name: name.trim().to_string(),
                file: file.clone(),
                ..Case::default()
            });
        } else if let Some(section) = line.strip_prefix("--- ") {
            let case = cases.last_mut().expect("a section belongs to a case");
            case.sections
                .push((section.trim().to_string(), String::new()));
        } else if let Some((_, body)) = cases.last_mut().and_then(|c| c.sections.last_mut()) {
            body.push_str(line);
        }
    }
    for case in &mut cases {
        for (_, body) in &mut case.sections {
            if body.ends_with('\n') {
                body.pop();
            }
        }
    }
    cases
}

fn run(case: &Case) -> Result<(), String> {
    let template = case.get("template").ok_or("no template")?;
    let input: serde_json::Value =
        serde_json::from_str(case.get("input").unwrap_or("{}")).map_err(|e| e.to_string())?;
    let config = CheckConfig {
        input_fields: case
            .get("fields")
            .map(|f| f.lines().map(str::to_string).collect()),
    };
    let problems: Vec<String> = check(template, &config)
        .iter()
        .map(|p| format!("Line {}: {}", p.line, p.text))
        .collect();
    if let Some(expected) = case.get("problems") {
        let expected: Vec<&str> = expected.lines().collect();
        return if problems == expected {
            Ok(())
        } else {
            Err(format!("problems {problems:#?}"))
        };
    }
    if !problems.is_empty() {
        return Err(format!("unexpected problems {problems:#?}"));
    }
    let parsed = parse(template).map_err(|p| format!("parse refused {p:?}"))?;
    let rendered = render(
        &parsed,
        &input,
        "2026-04-01",
        "2026-04-01T09:30:00Z",
        &RenderLimits::default(),
    );
    match (rendered, case.get("error")) {
        (Ok(out), None) => {
            let expected = case.get("output").ok_or("no output expected")?;
            if out.message != expected {
                return Err(format!("message {:?}", out.message));
            }
            if out.system.as_deref() != case.get("system") {
                return Err(format!("system {:?}", out.system));
            }
            Ok(())
        }
        (Ok(out), Some(_)) => Err(format!("rendered {:?}", out.message)),
        (Err(error), Some(expected)) => {
            let message = error.to_issue(0).message();
            if message == expected {
                Ok(())
            } else {
                Err(format!("error {message:?}"))
            }
        }
        (Err(error), None) => Err(format!("error {:?}", error.to_issue(0).message())),
    }
}

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    let mut count = 0;
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
    {
        for case in read_cases(path) {
            count += 1;
            if let Err(why) = run(&case) {
                failures.push(format!("{} / {}: {why}", case.file, case.name));
            }
        }
    }
    assert!(count > 0, "no cases found");
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
