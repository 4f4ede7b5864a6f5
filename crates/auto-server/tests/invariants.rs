//! The architecture invariants that a test can check, read from the crates' manifests.

use std::path::Path;

/// Crates that do no I/O and read no clock.
const PURE_CRATES: &[&str] = &[
    "auto-doc",
    "auto-problem",
    "auto-schema",
    "auto-template",
    "auto-script",
    "auto-engine",
];
/// Crates that bring I/O: an async runtime, a database, an HTTP stack.
const IO_CRATES: &[&str] = &[
    "tokio",
    "sqlx",
    "axum",
    "reqwest",
    "hyper",
    "auto-store",
    "auto-server",
];

fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).expect("a manifest");
    let value: toml::Table = toml::from_str(&text).expect("valid TOML");
    value
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn pure_crates_depend_on_no_io() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for name in PURE_CRATES {
        let manifest = crates.join(name).join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let found: Vec<String> = dependencies(&manifest)
            .into_iter()
            .filter(|d| IO_CRATES.contains(&d.as_str()))
            .collect();
        assert!(
            found.is_empty(),
            "{name} must do no I/O but depends on {found:?}"
        );
    }
}

#[test]
fn the_store_knows_no_definition_format() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../auto-store/Cargo.toml");
    let found: Vec<String> = dependencies(&manifest)
        .into_iter()
        .filter(|d| d.starts_with("auto-") || d == "jsonschema" || d == "saphyr-parser")
        .collect();
    assert!(found.is_empty(), "auto-store depends on {found:?}");
}

/// One problem type: every crate's rejections are `auto_problem::Problem`, and no other crate
/// declares a type of that name.
#[test]
fn one_problem_type() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut folders = vec![crates];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a folder") {
            let path = entry.expect("an entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() && !matches!(name, "tests" | "target" | "benches" | "examples") {
                folders.push(path);
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                if text.contains("pub struct Problem {") {
                    found.push(path);
                }
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("auto-problem/src/lib.rs"), "{found:?}");
}

/// "nothing but `auto-tools` [speaks] to a tool server": no other crate takes rmcp's client as
/// a dependency (tests may, as MCP clients of the runtime's own server).
#[test]
fn nothing_but_auto_tools_is_an_mcp_client() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for entry in std::fs::read_dir(&crates).expect("the crates folder") {
        let dir = entry.expect("an entry").path();
        let manifest = dir.join("Cargo.toml");
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if !manifest.exists() || name == "auto-tools" {
            continue;
        }
        let text = std::fs::read_to_string(&manifest).expect("a manifest");
        let value: toml::Table = toml::from_str(&text).expect("valid TOML");
        let client = value
            .get("dependencies")
            .and_then(|d| d.get("rmcp"))
            .and_then(|r| r.get("features"))
            .and_then(|f| f.as_array())
            .is_some_and(|features| features.iter().any(|f| f.as_str() == Some("client")));
        assert!(
            !client,
            "{name} takes rmcp's client: only auto-tools speaks to tool servers"
        );
    }
}

/// "The runtime knows no HTTP": `auto-runtime` depends neither on axum nor on the server, directly
/// or through another crate (reqwest's client stack is the only HTTP it has). By hand: `cargo tree -e normal -p auto-runtime
/// -i axum` prints nothing (cargo says the package is not in the graph).
#[test]
fn the_runtime_depends_on_no_http_server() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = std::process::Command::new(cargo)
        .current_dir(&workspace)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "-p",
            "auto-runtime",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8_lossy(&output.stdout);
    let names: std::collections::BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(names.contains("auto-store"), "{tree}");
    for server in ["axum", "auto-server"] {
        assert!(
            !names.contains(server),
            "auto-runtime depends on {server}: {tree}"
        );
    }
}
