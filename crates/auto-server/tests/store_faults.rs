//! A store that breaks under the server: a SQLite file on a disk that fills, a database file
//! that cannot be written when the server starts, PostgreSQL connections cut while workflows
//! run. The server says so at `/healthz`, writes again once the fault clears, and a run goes on
//! through a fault that clears.
//!
//! The SQLite cases make the fault for real, so they run as root: the full disk is a small
//! tmpfs mounted for the test, the read-only file an immutable one (`chattr +i`; root ignores
//! a file's permissions, not this flag).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::TestServer;
use serde_json::{Value, json};

fn models() -> auto_server::reasoning_runs::Models {
    auto_server::reasoning_runs::Models::none()
}

/// Whether this process may make the SQLite faults, which need root (`mount`, `chattr`).
/// Elsewhere the two cases say they were skipped, as the suites do without a test partner, but
/// CI runs as root and fails rather than skip.
fn makes_faults() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0");
    if root {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs as root: these tests make their faults as root"
    );
    eprintln!("skipped: these tests make their faults as root (mount, chattr)");
    false
}

/// Runs a command that must succeed; these tests make their faults as root.
fn must(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(
        status.success(),
        "{program} {args:?} failed ({status}): this test makes its fault as root"
    );
}

/// A tmpfs of `size` mounted on a new directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().to_str().unwrap();
        must(
            "mount",
            &["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", at],
        );
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills what is left with one file, until the disk says it is full.
    fn fill(&self) -> PathBuf {
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 16 * 1024];
        loop {
            if let Err(error) = file.write_all(&chunk).and_then(|()| file.sync_all()) {
                assert_eq!(error.raw_os_error(), Some(28), "ENOSPC: {error}");
                break;
            }
        }
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .args(["-l", self.dir.path().to_str().unwrap()])
            .status();
    }
}

/// A file made immutable, made mutable again when dropped.
struct Immutable(PathBuf);

impl Immutable {
    fn set(path: &Path) -> Self {
        must("chattr", &["+i", path.to_str().unwrap()]);
        Self(path.to_owned())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .args(["-i", self.0.to_str().unwrap()])
            .status();
    }
}

async fn publish(server: &TestServer, pb: &str, data: Value) -> common::Reply {
    server
        .post(
            &format!("{pb}/events"),
            json!({"type": "com.example.tick", "data": data}),
        )
        .await
}

const WAIT: &str = include_str!("data/wait-a-second.yaml");

#[tokio::test]
async fn a_full_disk_fails_writes_until_it_clears_and_healthz_says_so() {
    if !makes_faults() {
        return;
    }
    let disk = SmallDisk::mount("2m");
    let url = format!("sqlite://{}", disk.path().join("auto.db").display());
    let store = auto_store::open(&url).await.expect("a SQLite store");
    let server =
        TestServer::start_on(store, Vec::new(), models(), tempfile::tempdir().unwrap()).await;
    let pb = server.playbook().await;
    server.save_definition(&pb, "workflow", "pause", WAIT).await;
    let healthy = server.get("/healthz").await;
    assert_eq!(healthy.status, 200, "{:#}", healthy.body);
    let filler = disk.fill();
    // Writes go on while the log has room it wrote before; then one fails.
    let mut refused = None;
    for i in 0..2_000 {
        let reply = publish(&server, &pb, json!({"i": i, "pad": "x".repeat(200)})).await;
        if reply.status != 201 {
            refused = Some(reply);
            break;
        }
    }
    let refused = refused.expect("a write fails on the full disk");
    refused.assert_problem(503, "unavailable");
    assert_eq!(
        refused.body["kind"], "store_unavailable",
        "{:#}",
        refused.body
    );
    let unhealthy = server.get("/healthz").await;
    let problem = unhealthy.assert_problem(503, "unavailable");
    assert_eq!(problem["kind"], "store_unavailable");
    assert_eq!(problem["detail"], "The server cannot write to its store.");
    // The space comes back: so do writes, the health, and the runs' timers.
    std::fs::remove_file(filler).unwrap();
    let written = publish(&server, &pb, json!("after")).await;
    assert_eq!(written.status, 201, "{:#}", written.body);
    let healthy = server.get("/healthz").await;
    assert_eq!(healthy.status, 200, "{:#}", healthy.body);
    let started = server
        .post(
            &format!("{pb}/definitions/workflow/pause/runs"),
            json!({"run_id": "after"}),
        )
        .await;
    assert_eq!(started.status, 202, "{:#}", started.body);
    let run = server.ended(&pb, "after", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    drop(server);
}

#[tokio::test]
async fn a_server_started_on_a_file_it_cannot_write_says_so_and_writes_once_it_can() {
    if !makes_faults() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auto.db");
    let url = format!("sqlite://{}", file.display());
    let store = auto_store::open(&url).await.expect("a SQLite store");
    store.create_org("acme", None).await.unwrap();
    // Its connections closed, SQLite removes the log. (A connection still open would lend the
    // next its descriptor, opened for writing before the file was made immutable.)
    store.close().await;
    drop(store);
    assert!(
        !dir.path().join("auto.db-wal").exists(),
        "the first store's log is left after it closed"
    );
    let immutable = Immutable::set(&file);
    let store = auto_store::open(&url)
        .await
        .expect("a store on a file it cannot write still opens");
    let server =
        TestServer::start_on(store, Vec::new(), models(), tempfile::tempdir().unwrap()).await;
    let unhealthy = server.get("/healthz").await;
    let problem = unhealthy.assert_problem(503, "unavailable");
    assert_eq!(problem["kind"], "store_unavailable");
    assert_eq!(problem["detail"], "The server cannot write to its store.");
    // It reads what the file holds, and refuses to change it.
    let org = server.get("/v1/orgs/acme").await;
    assert_eq!(org.status, 200, "{:#}", org.body);
    let refused = server
        .post("/v1/orgs/acme/playbooks", json!({"id": "main"}))
        .await;
    assert_eq!(refused.status, 503, "{:#}", refused.body);
    assert_eq!(
        refused.body["kind"], "store_unavailable",
        "{:#}",
        refused.body
    );
    drop(immutable);
    let created = server
        .post("/v1/orgs/acme/playbooks", json!({"id": "main"}))
        .await;
    assert_eq!(created.status, 201, "{:#}", created.body);
    let healthy = server.get("/healthz").await;
    assert_eq!(healthy.status, 200, "{:#}", healthy.body);
}

const CALLER: &str = include_str!("data/call-double-twice.yaml");

const DOUBLE: &str = include_str!("data/double-a-number.md");

/// PostgreSQL only: it cuts the database's connections. Without `AUTO_TEST_POSTGRES` it says
/// it was skipped, as the store suite does.
#[tokio::test]
async fn workflows_on_two_servers_outlast_their_connections_being_cut() {
    let Ok(url) = std::env::var("AUTO_TEST_POSTGRES") else {
        eprintln!("skipped: AUTO_TEST_POSTGRES holds no database URL");
        return;
    };
    // The store's connections carry a name of their own, so that only they are cut.
    let name = format!("auto-faults-{}", std::process::id());
    let separator = if url.contains('?') { '&' } else { '?' };
    let store_url = format!("{url}{separator}application_name={name}");
    let store = auto_store::open_postgres_isolated(&store_url)
        .await
        .expect("an isolated PostgreSQL store");
    let a = TestServer::start_on(
        store.clone(),
        Vec::new(),
        models(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let b = TestServer::start_on(store, Vec::new(), models(), tempfile::tempdir().unwrap()).await;
    let pb = a.playbook().await;
    for (def_type, name, source) in [
        ("computation", "double", DOUBLE),
        ("workflow", "caller", CALLER),
    ] {
        a.save_definition(&pb, def_type, name, source).await;
    }
    let admin = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .expect("an admin connection");
    let cut = || async {
        sqlx::query(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(&name)
        .fetch_one(&admin)
        .await
        .expect("the connections are cut");
    };
    const RUNS: usize = 40;
    let mut started = Vec::new();
    for i in 0..RUNS {
        let server = if i % 2 == 0 { &a } else { &b };
        let run_id = format!("w-{i}");
        let reply = server
            .post(
                &format!("{pb}/definitions/workflow/caller/runs"),
                json!({"run_id": run_id, "input": {"n": i}}),
            )
            .await;
        if reply.status == 202 || reply.status == 200 {
            started.push(run_id);
        }
        if i % 5 == 4 {
            cut().await;
        }
    }
    assert!(started.len() >= RUNS / 2, "most runs start: {started:?}");
    // While they wait and call, every connection is cut a few times more.
    for _ in 0..5 {
        cut().await;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    for run_id in &started {
        let run = a.ended(&pb, run_id, Duration::from_secs(120)).await;
        assert_eq!(run["status"], "succeeded", "{run:#}");
    }
}
