//! Three `auto serve` on one PostgreSQL under faults, and a checker over the whole history.
//!
//! The load, per unit `i`: a workflow that waits on a timer and then calls a computation three
//! times (`c-i`, `{x: 0}` to `{x: 3}`), a reasoning run against the provider double (`r-i`), a
//! workflow that asks a person through an interaction the test answers (`a-i`), and an event
//! published for an event trigger that starts a workflow (`e-i`), and a reasoning run that calls
//! a read-only tool and a writing one on a tool server double that records every call (`n-i`).
//! Then a fork whose call competes with a minute's timer (`f-i`), a workflow that listens for
//! three events the test sends it one after another and must take them in that order (`h-i`),
//! and a workflow that calls the writing reasoning function as its step (`t-i`). Fourteen runs
//! a unit; a workflow that listens, from before the load, for three events published to the
//! playbook during it (`w-0`); and an `every` trigger starts a workflow each minute throughout.
//!
//! The faults, at moments a seed chooses (printed; `CHAOS_SEED` replays one): a server killed
//! with SIGKILL and started again; a server's PostgreSQL connections terminated
//! (`pg_terminate_backend`); a server frozen with SIGSTOP past its work lease (30 seconds) and
//! woken with SIGCONT, whose late writes must be refused; a server started again with the clock
//! its schedules read minutes ahead or behind; the network between a server and PostgreSQL
//! (a TCP proxy the test controls) lagging for seconds, or dropping every connection. At least
//! one server stays up.
//!
//! The checker, once every server is up again and every run has ended: every run started and
//! ended exactly once; each event sent to a run taken once, in the order sent; no workflow step
//! applied twice; each workflow's output is what its steps make, with three children each,
//! never more; no call of the writing tool made twice; one `every` run per due time; no
//! answered model call made again; each request answered once; one triggered run per event;
//! and the playbook's `seq` gapless, and seen in order by a follower that read it throughout.
//!
//! `CHAOS_UNITS` (default 30, 421 runs), `CHAOS_SECONDS` (default 30, the time the load is
//! spread over) and `CHAOS_FREEZES` (default 1) size it. `CHAOS_POSTGRES_RESTARTS=1` adds
//! PostgreSQL itself restarted, never in the workspace's tests, which share it;
//! `bench/chaos/run` is the long version, with it. It needs `AUTO_TEST_POSTGRES`, and fails
//! rather than skips without it when `CI` is set.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use common::{PLAYBOOK_PATH, Server, serve_in};
use serde_json::{Value, json};

const ADD_ONE: &str = include_str!("data/add-one.md");
const REVIEW: &str = include_str!("data/review-a-brief.md");
const APPROVE: &str = include_str!("data/approve-the-plan.md");
const ASK: &str = include_str!("data/ask-for-approval.yaml");

/// A reasoning function that looks a thing up (read-only) and writes it down (not read-only).
const NOTE: &str = "---
model: anthropic/claude-sonnet-4-5
tools: [notes/lookup, notes/write]
---
Look {{ input.q }} up and note it.
";

const CHAIN: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: chain
  version: 1.0.0
do:
  - pause:
      wait:
        milliseconds: 300
  - first:
      call: run_definition
      with: { type: computation, name: add-one, input: { x: '${ $data.x }' } }
  - second:
      call: run_definition
      with: { type: computation, name: add-one, input: { x: '${ $data.x }' } }
  - third:
      call: run_definition
      with: { type: computation, name: add-one, input: { x: '${ $data.x }' } }
";

const ON_TICK: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: on-tick
  version: 1.0.0
schedule:
  on:
    one:
      with: { type: com.example.tick }
do:
  - take:
      set:
        tick: ${ $data[0].data.i }
";

/// A workflow whose two branches compete: a call that answers at once, and a timer of a
/// minute that must be cancelled when the call wins.
const RACE: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: race
  version: 1.0.0
do:
  - both:
      fork:
        compete: true
        branches:
          - slow:
              do:
                - pause:
                    wait: PT1M
                - late:
                    set:
                      x: -1
          - quick:
              call: run_definition
              with: { type: computation, name: add-one, input: { x: '${ $data.x }' } }
";

/// A workflow that calls the reasoning function that writes, as a step of its own.
const THINK: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: think
  version: 1.0.0
do:
  - note:
      call: run_definition
      with: { type: reasoning, name: note, input: { q: '${ $data.q }' } }
";

/// A workflow listening, from before the load, for three events published to the playbook
/// during it: each must reach it once, whichever server records or follows it.
const WATCH: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: watch
  version: 1.0.0
do:
  - news:
      listen:
        to:
          all:
            - with: { type: com.example.news, data: '${ $data.n === 0 }' }
            - with: { type: com.example.news, data: '${ $data.n === 1 }' }
            - with: { type: com.example.news, data: '${ $data.n === 2 }' }
        read: envelope
";

/// A workflow that listens for three events sent to it, one task after another: each task
/// takes the earliest kept, so the list it makes is the order they were sent in.
const HEAR: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: hear
  version: 1.0.0
do:
  - first:
      listen:
        to:
          one:
            with: { type: com.example.go }
  - second:
      listen:
        to:
          one:
            with: { type: com.example.go }
      output:
        as: '[...$input, ...$data]'
  - third:
      listen:
        to:
          one:
            with: { type: com.example.go }
      output:
        as: '[...$input, ...$data]'
";

/// A workflow an `every` trigger starts each minute (the shortest period), which keeps the
/// time it was due.
const BEAT: &str = "document:
  dsl: 1.0.3
  namespace: chaos
  name: beat
  version: 1.0.0
schedule:
  every: PT1M
do:
  - keep:
      set:
        due: ${ $data.schedule.due }
";

/// The servers of the suite.
const SERVERS: usize = 3;
/// A work item's lease: a frozen server is held past it.
const LEASE: Duration = Duration::from_secs(30);
/// How long a frozen server stays frozen: past its leases.
const FROZEN: Duration = Duration::from_secs(LEASE.as_secs() + 3);
/// The servers' bound on a model call, past a freeze: a call in flight when its server is
/// frozen is still in flight when it thaws, and a bound the freeze outlasted would end it
/// `timed_out` by the clock at once, whatever the provider had answered meanwhile (the
/// bound is wall-clock time, and a frozen process cannot tell it passed while frozen).
const MODEL_CALL_BOUND: Duration = Duration::from_secs(FROZEN.as_secs() * 2);
/// Runs each unit of load makes.
const RUNS_PER_UNIT: usize = 14;

/// A small deterministic generator (xorshift64*): the seed alone decides the faults.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A server of the cluster: its folder (with its `auto.toml`), and the process while it runs.
struct Node {
    dir: tempfile::TempDir,
    server: Option<Server>,
    frozen: bool,
}

/// Writes the node's `[scheduler]`: sweeps every 100 ms, with the clock its schedules read
/// shifted by `offset_ms` (the runtime's clock source for tests), read at its next start.
fn set_clock(dir: &std::path::Path, offset_ms: i64) {
    let base = std::fs::read_to_string(dir.join("auto.toml")).expect("the configuration");
    let base = base
        .split("[scheduler]")
        .next()
        .unwrap_or_default()
        .to_owned();
    std::fs::write(
        dir.join("auto.toml"),
        format!("{base}[scheduler]\nsweep_ms = 100\nclock_offset_ms = {offset_ms}\n"),
    )
    .expect("the configuration");
}

/// A TCP proxy between one server and PostgreSQL that the test controls: a delay on every
/// chunk either way, and a cut of every connection through it, as a network that lags and
/// drops would.
struct Proxy {
    port: u16,
    delay_ms: Arc<AtomicU64>,
    cut: tokio::sync::watch::Sender<u64>,
}

impl Proxy {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let delay_ms = Arc::new(AtomicU64::new(0));
        let (cut, cuts) = tokio::sync::watch::channel(0_u64);
        let delay = delay_ms.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                for (from, to) in [(client_read, server_write), (server_read, client_write)] {
                    let (delay, mut cuts) = (delay.clone(), cuts.clone());
                    cuts.mark_unchanged();
                    tokio::spawn(async move {
                        tokio::select! {
                            () = pump(from, to, delay) => {}
                            _ = cuts.changed() => {}
                        }
                    });
                }
            }
        });
        Self {
            port,
            delay_ms,
            cut,
        }
    }

    fn lag(&self, ms: u64) {
        self.delay_ms.store(ms, Ordering::Relaxed);
    }

    /// Drops every connection through the proxy, mid-query or idle.
    fn drop_connections(&self) {
        self.cut.send_modify(|generation| *generation += 1);
    }
}

/// Copies bytes one way, each chunk after the proxy's delay, until either side closes.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay_ms: Arc<AtomicU64>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buffer = vec![0_u8; 64 * 1024];
    loop {
        let Ok(read) = from.read(&mut buffer).await else {
            return;
        };
        if read == 0 {
            return;
        }
        let delay = delay_ms.load(Ordering::Relaxed);
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// The database URL with its host and port replaced by the proxy's.
fn through(url: &str, port: u16) -> (String, String) {
    let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (user, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (format!("{user}@"), host),
        None => (String::new(), authority),
    };
    let upstream = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    };
    (format!("{scheme}://{user}127.0.0.1:{port}{path}"), upstream)
}

/// The three servers, and the address of each that answers now.
struct Cluster {
    nodes: Mutex<Vec<Node>>,
    urls: Mutex<Vec<Option<String>>>,
    proxies: Vec<Proxy>,
}

impl Cluster {
    async fn start(database: &str, provider: &ProviderDouble, tools: &McpDouble) -> Arc<Self> {
        let mut nodes = Vec::new();
        let mut urls = Vec::new();
        let mut proxies = Vec::new();
        for k in 0..SERVERS {
            let (_, upstream) = through(database, 0);
            let proxy = Proxy::start(upstream).await;
            let (database, _) = through(database, proxy.port);
            proxies.push(proxy);
            let dir = tempfile::tempdir().expect("a directory");
            let separator = if database.contains('?') { '&' } else { '?' };
            std::fs::write(
                dir.path().join("auto.toml"),
                format!(
                    "database = \"{database}{separator}application_name=chaos-{k}\"\n[providers.anthropic]\nbase_url = \"{}\"\napi_key = {{ env = \"CHAOS_PROVIDER_KEY\" }}\n[limits]\nmodel_call_bound_ms = {}\n[[tool_servers]]\nname = \"notes\"\nurl = \"{}\"\norgs = [\"acme\"]\n",
                    provider.base_url(),
                    MODEL_CALL_BOUND.as_millis(),
                    tools.url()
                ),
            )
            .expect("the configuration");
            set_clock(dir.path(), 0);
            let server = serve_in(dir.path(), &[("CHAOS_PROVIDER_KEY", "sk-ant-chaos")]);
            urls.push(Some(server.url.clone()));
            nodes.push(Node {
                dir,
                server: Some(server),
                frozen: false,
            });
        }
        Arc::new(Self {
            nodes: Mutex::new(nodes),
            urls: Mutex::new(urls),
            proxies,
        })
    }

    /// The addresses that answer now, from the `turn`th on.
    fn answering(&self, turn: usize) -> Vec<String> {
        let urls = self.urls.lock().unwrap();
        let up: Vec<String> = urls.iter().flatten().cloned().collect();
        let n = up.len().max(1);
        (0..up.len()).map(|i| up[(turn + i) % n].clone()).collect()
    }

    /// The servers neither down nor frozen.
    fn healthy(&self) -> Vec<usize> {
        let nodes = self.nodes.lock().unwrap();
        (0..SERVERS)
            .filter(|k| nodes[*k].server.is_some() && !nodes[*k].frozen)
            .collect()
    }

    fn kill(&self, k: usize) {
        let mut nodes = self.nodes.lock().unwrap();
        self.urls.lock().unwrap()[k] = None;
        if let Some(mut server) = nodes[k].server.take() {
            server.kill();
        }
    }

    /// Stops server `k` and starts it again with its schedules' clock `offset_ms` away.
    fn skew(&self, k: usize, offset_ms: i64) {
        self.kill(k);
        let dir = self.nodes.lock().unwrap()[k].dir.path().to_owned();
        set_clock(&dir, offset_ms);
        self.restart(k);
    }

    fn restart(&self, k: usize) {
        let mut nodes = self.nodes.lock().unwrap();
        if nodes[k].server.is_none() {
            let server = serve_in(
                nodes[k].dir.path(),
                &[("CHAOS_PROVIDER_KEY", "sk-ant-chaos")],
            );
            self.urls.lock().unwrap()[k] = Some(server.url.clone());
            nodes[k].server = Some(server);
        }
    }

    fn signal(&self, k: usize, signal: &str) {
        let mut nodes = self.nodes.lock().unwrap();
        let Some(server) = nodes[k].server.as_ref() else {
            return;
        };
        let pid = server.pid().to_string();
        std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill runs");
        let frozen = signal == "-STOP";
        let url = if frozen {
            None
        } else {
            Some(server.url.clone())
        };
        nodes[k].frozen = frozen;
        self.urls.lock().unwrap()[k] = url;
    }

    /// Every server up and awake.
    fn heal(&self) {
        for k in 0..SERVERS {
            self.signal(k, "-CONT");
            self.restart(k);
        }
    }
}

/// A client that sends each request to a server that answers, and again to another when a
/// server is down, frozen or cut off from its store: as a caller behind a load balancer does.
#[derive(Clone)]
struct Caller {
    cluster: Arc<Cluster>,
    http: reqwest::Client,
}

impl Caller {
    /// The answer's status and body; 503 and transport failures are tried again elsewhere.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        for attempt in 0..600_usize {
            for url in self.cluster.answering(attempt) {
                let mut request = self.http.request(method.clone(), format!("{url}{path}"));
                if let Some(body) = body {
                    request = request.json(body);
                }
                let Ok(response) = request.send().await else {
                    continue;
                };
                let status = response.status().as_u16();
                let body = response.json::<Value>().await.unwrap_or(Value::Null);
                if status != 503 && status != 502 {
                    return (status, body);
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no server answered {method} {path} within a minute");
    }

    async fn get(&self, path: &str) -> Value {
        let (status, body) = self.send(reqwest::Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {body:#}");
        body
    }

    /// Starts a run under its id: 200 or 202, or 409 when the run of that id is under way or
    /// was recorded by an earlier attempt whose answer was lost.
    async fn start(&self, def_type: &str, name: &str, run_id: &str, input: Value) {
        let path = format!("{PLAYBOOK_PATH}/definitions/{def_type}/{name}/runs");
        let body = json!({"run_id": run_id, "input": input});
        let (status, body) = self.send(reqwest::Method::POST, &path, Some(&body)).await;
        let going = status == 409 && matches!(body["kind"].as_str(), Some("taken" | "running"));
        assert!(
            matches!(status, 200 | 202) || going || body["run_id"] == run_id,
            "{def_type}/{name} {run_id}: {status} {body:#}"
        );
    }

    /// Records an event under its id: published to the playbook (201) when `run_id` is none,
    /// else sent to that run (202); 409 when an earlier attempt, whose answer was lost, recorded
    /// it.
    async fn event(&self, run_id: Option<&str>, event: &Value) {
        let (path, recorded) = match run_id {
            Some(run_id) => (format!("{PLAYBOOK_PATH}/runs/{run_id}/events"), 202),
            None => (format!("{PLAYBOOK_PATH}/events"), 201),
        };
        let (status, body) = self.send(reqwest::Method::POST, &path, Some(event)).await;
        assert!(
            status == recorded || status == 409,
            "{}: {status} {body:#}",
            event["id"]
        );
    }

    /// Every page of a listing, by its `next` cursor.
    async fn all(&self, path: &str, field: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = match &after {
                Some(cursor) => self.get(&format!("{path}&after={cursor}")).await,
                None => self.get(path).await,
            };
            items.extend(page[field].as_array().cloned().unwrap_or_default());
            match page["next"].as_str() {
                Some(next) => after = Some(next.to_owned()),
                None => return items,
            }
        }
    }
}

/// What the fault loop did, by kind.
#[derive(Debug, Default)]
struct Faults {
    kills: usize,
    cuts: usize,
    freezes: usize,
    skews: usize,
    lags: usize,
    drops: usize,
    postgres_restarts: usize,
}

/// Injects faults at moments `dice` chooses until `stop` is set.
async fn inject(
    cluster: Arc<Cluster>,
    admin: sqlx::PgPool,
    mut dice: Dice,
    stop: Arc<AtomicBool>,
    freezes_max: usize,
    postgres_restarts: bool,
    seconds: u64,
) -> Faults {
    let mut faults = Faults::default();
    let started = Instant::now();
    // The freezes, spread evenly over the load's time, each at a server the dice pick.
    let freeze_due = |done: usize| {
        started + Duration::from_secs(seconds) * (done as u32 + 1) / (freezes_max as u32 + 1)
    };
    let mut thawing: Vec<(usize, Instant)> = Vec::new();
    let mut lagging: Vec<(usize, Instant)> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(300 + dice.below(1_200))).await;
        let now = Instant::now();
        lagging.retain(|(k, at)| {
            if *at <= now {
                cluster.proxies[*k].lag(0);
                false
            } else {
                true
            }
        });
        thawing.retain(|(k, at)| {
            if *at <= now {
                cluster.signal(*k, "-CONT");
                false
            } else {
                true
            }
        });
        let healthy = cluster.healthy();
        if healthy.len() < 2 {
            continue;
        }
        let k = healthy[dice.below(healthy.len() as u64) as usize];
        if faults.freezes < freezes_max && now >= freeze_due(faults.freezes) {
            cluster.signal(k, "-STOP");
            thawing.push((k, now + FROZEN));
            faults.freezes += 1;
            continue;
        }
        match dice.below(15) {
            12 => {
                // The network to the database lags for a few seconds.
                let proxy = &cluster.proxies[k];
                proxy.lag(20 + dice.below(180));
                lagging.push((k, now + Duration::from_millis(2_000 + dice.below(4_000))));
                faults.lags += 1;
            }
            13 => {
                cluster.proxies[k].drop_connections();
                faults.drops += 1;
            }
            14 if postgres_restarts => {
                // Every server loses the database at once, for as long as a restart takes.
                let restarted = tokio::task::spawn_blocking(restart_postgres)
                    .await
                    .expect("a restart");
                assert!(restarted, "PostgreSQL did not restart");
                faults.postgres_restarts += 1;
            }
            9..=10 => {
                // Minutes ahead or behind, or back to the true time.
                let offset_ms = (dice.below(9) as i64 - 4) * 60_000;
                let cluster = cluster.clone();
                tokio::task::spawn_blocking(move || cluster.skew(k, offset_ms))
                    .await
                    .expect("a restart with a skewed clock");
                faults.skews += 1;
            }
            0..=4 => {
                let cluster = cluster.clone();
                let down = Duration::from_millis(200 + dice.below(1_500));
                tokio::task::spawn_blocking(move || {
                    cluster.kill(k);
                    std::thread::sleep(down);
                    cluster.restart(k);
                })
                .await
                .expect("a kill and restart");
                faults.kills += 1;
            }
            5..=8 => {
                let cut = sqlx::query(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
                )
                .bind(format!("chaos-{k}"))
                .fetch_one(&admin)
                .await;
                // Right after PostgreSQL restarted, the admin's own connection may be gone.
                if cut.is_ok() {
                    faults.cuts += 1;
                }
            }
            _ => {}
        }
    }
    for (k, _) in lagging {
        cluster.proxies[k].lag(0);
    }
    // A frozen server wakes only once its leases have run out, whatever else has stopped.
    for (k, at) in thawing {
        tokio::time::sleep_until(at.into()).await;
        cluster.signal(k, "-CONT");
    }
    faults
}

/// Restarts the machine's PostgreSQL cluster as its service tools do; whether it came back.
fn restart_postgres() -> bool {
    let Ok(versions) = std::fs::read_dir("/etc/postgresql") else {
        return false;
    };
    let Some(version) = versions
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .next()
    else {
        return false;
    };
    let restarted = std::process::Command::new("pg_ctlcluster")
        .args(["--skip-systemctl-redirect", &version, "main", "restart"])
        .status()
        .is_ok_and(|status| status.success());
    restarted
        && (0..60).any(|_| {
            std::thread::sleep(Duration::from_millis(250));
            std::process::Command::new("pg_isready")
                .args(["-q", "-h", "127.0.0.1", "-p", "5432"])
                .status()
                .is_ok_and(|status| status.success())
        })
}

/// Reads the playbook's log throughout, as a follower does, through whichever server answers;
/// every `seq` it was shown, in the order shown.
async fn follow(caller: Caller, stop: Arc<AtomicBool>) -> Vec<i64> {
    let mut seen = Vec::new();
    let mut after = 0_i64;
    loop {
        let done = stop.load(Ordering::Relaxed);
        let page = caller
            .get(&format!("{PLAYBOOK_PATH}/events?after={after}&limit=1000"))
            .await;
        let events = page["events"].as_array().cloned().unwrap_or_default();
        for event in &events {
            let seq = event["seq"].as_i64().expect("a seq");
            seen.push(seq);
            after = after.max(seq);
        }
        if events.is_empty() {
            if done {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_servers_under_faults_lose_nothing_and_do_nothing_twice() {
    let Ok(url) = std::env::var("AUTO_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "AUTO_TEST_POSTGRES is needed in CI"
        );
        eprintln!("skipped: AUTO_TEST_POSTGRES is not set");
        return;
    };
    let seed = env_number("CHAOS_SEED", {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        nanos | 1
    });
    let units = env_number("CHAOS_UNITS", 30) as usize;
    let freezes_max = env_number("CHAOS_FREEZES", 1) as usize;
    let seconds = env_number("CHAOS_SECONDS", 30);
    // Restarting PostgreSQL cuts every other test using it too: the long version alone does.
    let postgres_restarts = env_number("CHAOS_POSTGRES_RESTARTS", 0) == 1;
    eprintln!(
        "chaos: CHAOS_SEED={seed} CHAOS_UNITS={units} CHAOS_FREEZES={freezes_max} CHAOS_SECONDS={seconds}"
    );

    // A schema of its own, so the servers share nothing with other tests.
    let admin = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&url)
        .await
        .expect("PostgreSQL");
    let schema = format!("chaos_{seed:x}");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS \"{schema}\" CASCADE; CREATE SCHEMA \"{schema}\""
    )))
    .execute(&admin)
    .await
    .expect("the schema");
    let separator = if url.contains('?') { '&' } else { '?' };
    let database = format!("{url}{separator}options=-c%20search_path%3D{schema}");

    let provider = ProviderDouble::start(ProviderKind::Anthropic).await;
    // A run that offers tools is asked to call both, then answers; one without answers at once.
    let call = |id: &str, name: &str| ScriptedToolCall {
        call_id: id.into(),
        name: name.into(),
        arguments: json!({"q": "x"}),
    };
    provider.answer_always(Reply::UntilToolResults {
        calls: vec![call("l1", "notes__lookup"), call("w1", "notes__write")],
        then: Box::new(Reply::Text("Reviewed.".into())),
    });
    let tools = McpDouble::start().await;
    let cluster = Cluster::start(&database, &provider, &tools).await;
    let caller = Caller {
        cluster: cluster.clone(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("a client"),
    };
    let setup = common::Client::new(&cluster.answering(0)[0]);
    setup.playbook().await;
    for (def_type, name, source) in [
        ("computation", "add-one", ADD_ONE),
        ("workflow", "chain", CHAIN),
        ("reasoning", "review", REVIEW),
        ("interaction", "approve", APPROVE),
        ("workflow", "ask", ASK),
        ("workflow", "on-tick", ON_TICK),
        ("reasoning", "note", NOTE),
        ("workflow", "beat", BEAT),
        ("workflow", "race", RACE),
        ("workflow", "hear", HEAR),
        ("workflow", "think", THINK),
        ("workflow", "watch", WATCH),
    ] {
        setup
            .save_definition(PLAYBOOK_PATH, def_type, name, source)
            .await;
    }
    // Listening once its start is answered: its first step, the listen, is recorded with it.
    let watching = setup
        .start_run(PLAYBOOK_PATH, "workflow", "watch", json!({"run_id": "w-0"}))
        .await;
    assert_eq!(watching.status, 202, "{:#}", watching.body);

    let stop_faults = Arc::new(AtomicBool::new(false));
    let stop_follow = Arc::new(AtomicBool::new(false));
    let faults = tokio::spawn(inject(
        cluster.clone(),
        admin.clone(),
        Dice(seed),
        stop_faults.clone(),
        freezes_max,
        postgres_restarts,
        seconds,
    ));
    let follower = tokio::spawn(follow(caller.clone(), stop_follow.clone()));

    // The load, a few units at a time, while the faults go on.
    let started = Instant::now();
    let mut load = tokio::task::JoinSet::new();
    // Spread over the seconds the faults go on, so runs are under way at every fault.
    let pace = Duration::from_secs(seconds) / u32::try_from(units.max(1)).unwrap_or(u32::MAX);
    for i in 0..units {
        tokio::time::sleep_until((started + pace * i as u32).into()).await;
        let caller = caller.clone();
        load.spawn(async move {
            caller
                .start("workflow", "chain", &format!("c-{i}"), json!({"x": 0}))
                .await;
            caller
                .start(
                    "reasoning",
                    "review",
                    &format!("r-{i}"),
                    json!({"brief": format!("b{i}")}),
                )
                .await;
            caller
                .start(
                    "workflow",
                    "ask",
                    &format!("a-{i}"),
                    json!({"owner": format!("o{i}")}),
                )
                .await;
            caller
                .start(
                    "reasoning",
                    "note",
                    &format!("n-{i}"),
                    json!({"q": format!("n-{i}")}),
                )
                .await;
            caller
                .start("workflow", "race", &format!("f-{i}"), json!({"x": 1}))
                .await;
            caller
                .start("workflow", "hear", &format!("h-{i}"), json!({}))
                .await;
            caller
                .start(
                    "workflow",
                    "think",
                    &format!("t-{i}"),
                    json!({"q": format!("t-{i}")}),
                )
                .await;
            // Three, each sent under its id once the one before was taken in: a send the
            // caller makes again is the same event, and the run must take them in this order.
            let hear = format!("h-{i}");
            for k in 0..3 {
                let go = json!({"type": "com.example.go", "id": format!("go-{i}-{k}"), "data": {"i": i, "k": k}});
                caller.event(Some(&hear), &go).await;
            }
            if i == 0 {
                // The news the watcher waits for, published while the faults go on.
                for n in 0..3 {
                    let news = json!({"type": "com.example.news", "id": format!("news-{n}"), "data": {"n": n}});
                    caller.event(None, &news).await;
                }
            }
            let tick = json!({"type": "com.example.tick", "id": format!("e-{i}"), "data": {"i": i}});
            caller.event(None, &tick).await;
        });
        while load.len() >= 12 {
            load.join_next()
                .await
                .expect("a unit")
                .expect("the unit ran");
        }
    }
    while let Some(unit) = load.join_next().await {
        unit.expect("the unit ran");
    }
    // Faults go on a while after the last request, into the runs still going.
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop_faults.store(true, Ordering::Relaxed);
    let faults = faults.await.expect("the faults");
    cluster.heal();
    // No more beats: what was due until now has started or will, and must end.
    let (status, body) = caller
        .send(
            reqwest::Method::DELETE,
            &format!("{PLAYBOOK_PATH}/definitions/workflow/beat"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body:#}");
    eprintln!(
        "chaos: load sent in {:?}; faults {faults:?}",
        started.elapsed()
    );

    // Every run ends: requests are answered as they open, and a reasoning run a kill cut off
    // is asked again under its id, as its caller would.
    // Each unit's runs, and the one watcher.
    let expected = units * RUNS_PER_UNIT + 1;
    let deadline = Instant::now() + Duration::from_secs(env_number("CHAOS_DRAIN_SECONDS", 300));
    let runs = loop {
        let open = caller
            .all(
                &format!("{PLAYBOOK_PATH}/requests?status=open&limit=1000"),
                "requests",
            )
            .await;
        for request in open {
            let id = request["request_id"].as_str().expect("an id");
            let path = format!("{PLAYBOOK_PATH}/requests/{id}/answer");
            let answer = json!({"answer": {"verdict": "approve"}});
            let (status, body) = caller
                .send(reqwest::Method::POST, &path, Some(&answer))
                .await;
            assert!(matches!(status, 200 | 409), "{id}: {status} {body:#}");
        }
        let runs = caller
            .all(&format!("{PLAYBOOK_PATH}/runs?limit=1000"), "runs")
            .await;
        let going: Vec<&Value> = runs.iter().filter(|r| r["status"] == "started").collect();
        let beats = runs.iter().filter(|r| r["name"] == "beat").count();
        if runs.len() - beats == expected && going.is_empty() {
            break runs;
        }
        for run in &going {
            let id = run["run_id"].as_str().expect("an id");
            if let Some(i) = id.strip_prefix("r-") {
                caller
                    .start("reasoning", "review", id, json!({"brief": format!("b{i}")}))
                    .await;
            } else if id.starts_with("n-") {
                caller
                    .start("reasoning", "note", id, json!({"q": id}))
                    .await;
            }
        }
        if Instant::now() >= deadline {
            let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
            for run in &runs {
                *kinds
                    .entry(format!("{}/{}", run["type"], run["name"]))
                    .or_default() += 1;
            }
            eprintln!("chaos: recorded by definition {kinds:?}");
        }
        assert!(
            Instant::now() < deadline,
            "not every run ended: {} of {expected} recorded, {} going: {going:#?}",
            runs.len(),
            going.len()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    stop_follow.store(true, Ordering::Relaxed);
    let seen = follower.await.expect("the follower");

    // The history, whole.
    let events = caller
        .all(&format!("{PLAYBOOK_PATH}/events?limit=1000"), "events")
        .await;
    let seqs: Vec<i64> = events
        .iter()
        .map(|e| e["seq"].as_i64().expect("seq"))
        .collect();
    let gapless: Vec<i64> = (1..=seqs.len() as i64).collect();
    assert_eq!(seqs, gapless, "the log's seq has a gap or a repeat");
    assert_eq!(
        seen, gapless,
        "the follower saw the log out of order or with a hole"
    );

    let mut starts: BTreeMap<String, usize> = BTreeMap::new();
    let mut endings: BTreeMap<String, usize> = BTreeMap::new();
    let mut model_calls: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    let mut steps: BTreeMap<(String, String), usize> = BTreeMap::new();
    for event in &events {
        let Some(run_id) = event["run_id"].as_str() else {
            continue;
        };
        let kind = event["type"].as_str().unwrap_or_default();
        if kind == "run_started" {
            *starts.entry(run_id.to_owned()).or_default() += 1;
        }
        if matches!(kind, "run_succeeded" | "run_failed" | "run_rejected") {
            *endings.entry(run_id.to_owned()).or_default() += 1;
        }
        if kind == "step_completed" {
            let reference = event["data"]["reference"].as_str().unwrap_or_default();
            *steps
                .entry((run_id.to_owned(), reference.to_owned()))
                .or_default() += 1;
        }
        if kind.starts_with("model_call_") {
            let number = event["data"]["number"].as_u64().unwrap_or(0);
            model_calls
                .entry(run_id.to_owned())
                .or_default()
                .push((kind.to_owned(), number));
        }
    }
    // No workflow step applied twice (none of these workflows loops), and the branch that lost
    // the race never finished.
    for ((run_id, reference), count) in &steps {
        assert_eq!(
            *count, 1,
            "{run_id}: the step {reference} completed {count} times"
        );
        assert!(
            !reference.ends_with("/late"),
            "{run_id}: the losing branch finished"
        );
    }
    assert!(!steps.is_empty(), "no step was recorded");
    // Every run started once and ended once.
    let beats: Vec<&Value> = runs.iter().filter(|r| r["name"] == "beat").collect();
    assert_eq!(runs.len() - beats.len(), expected);
    for run in &runs {
        let id = run["run_id"].as_str().expect("an id");
        assert_eq!(
            starts.get(id),
            Some(&1),
            "{id} started {:?} times",
            starts.get(id)
        );
        assert_eq!(
            endings.get(id),
            Some(&1),
            "{id} ended {:?} times",
            endings.get(id)
        );
    }
    let of = |def_type: &str, name: &str| -> Vec<&Value> {
        runs.iter()
            .filter(|r| r["type"] == def_type && r["name"] == name)
            .collect()
    };
    // Each workflow's steps made their output once; every child once.
    assert_eq!(of("workflow", "chain").len(), units);
    assert_eq!(of("computation", "add-one").len(), 4 * units);
    assert_eq!(of("interaction", "approve").len(), units);
    for i in 0..units {
        let chain = caller.get(&format!("{PLAYBOOK_PATH}/runs/c-{i}")).await;
        assert_eq!(chain["status"], "succeeded", "{chain:#}");
        assert_eq!(chain["output"], json!({"x": 3}), "{chain:#}");
        let ask = caller.get(&format!("{PLAYBOOK_PATH}/runs/a-{i}")).await;
        assert_eq!(ask["status"], "succeeded", "{ask:#}");
        let review = caller.get(&format!("{PLAYBOOK_PATH}/runs/r-{i}")).await;
        assert_eq!(review["status"], "succeeded", "{review:#}");
        // The call won the race, once; the timer's branch never finished.
        let race = caller.get(&format!("{PLAYBOOK_PATH}/runs/f-{i}")).await;
        assert_eq!(race["status"], "succeeded", "{race:#}");
        assert_eq!(race["output"], json!({"x": 2}), "{race:#}");
        // The event sent to the run was taken once, its own.
        let hear = caller.get(&format!("{PLAYBOOK_PATH}/runs/h-{i}")).await;
        assert_eq!(hear["status"], "succeeded", "{hear:#}");
        assert_eq!(
            hear["output"],
            json!([{"i": i, "k": 0}, {"i": i, "k": 1}, {"i": i, "k": 2}]),
            "{hear:#}"
        );
    }
    // No answered model call was made again: after a number's answer, no start of it.
    for (run_id, calls) in &model_calls {
        let mut answered = BTreeSet::new();
        for (kind, number) in calls {
            match kind.as_str() {
                "model_call_started" => {
                    assert!(
                        !answered.contains(number),
                        "{run_id}: call {number} made again after its answer: {calls:?}"
                    );
                }
                "model_call_answered" => {
                    assert!(
                        answered.insert(*number),
                        "{run_id}: call {number} answered twice: {calls:?}"
                    );
                }
                _ => {}
            }
        }
    }
    // No call of the writing tool made twice; a run that cannot know whether its call was
    // made ends `effect_unknown`, and every other ends with its answer.
    let calls = tools.calls();
    let mut writes_by_run: BTreeMap<String, usize> = BTreeMap::new();
    for call in calls.iter().filter(|c| c.tool == "write") {
        let run_id = call.meta["auto.on/run_id"].as_str().unwrap_or_default();
        *writes_by_run.entry(run_id.to_owned()).or_default() += 1;
    }
    for (run_id, writes) in &writes_by_run {
        assert_eq!(
            *writes, 1,
            "{run_id}: the writing tool was called {writes} times"
        );
    }
    let noting = of("reasoning", "note");
    assert_eq!(
        noting.len(),
        2 * units,
        "a note run direct and one a workflow called, a unit"
    );
    for run in &noting {
        let id = run["run_id"].as_str().expect("an id");
        let run = caller.get(&format!("{PLAYBOOK_PATH}/runs/{id}")).await;
        if run["status"] == "succeeded" {
            assert_eq!(
                writes_by_run.get(id),
                Some(&1),
                "{id} succeeded without its write"
            );
        } else {
            assert_eq!(run["problem"]["kind"], "effect_unknown", "{run:#}");
        }
    }
    for i in 0..units {
        // The workflow's call ends as its child did.
        let think = caller.get(&format!("{PLAYBOOK_PATH}/runs/t-{i}")).await;
        if think["status"] != "succeeded" {
            assert_eq!(think["problem"]["kind"], "effect_unknown", "{think:#}");
        }
    }
    let mut notes = 0;
    for i in 0..units {
        let id = format!("n-{i}");
        let writes = calls
            .iter()
            .filter(|c| c.tool == "write" && c.meta["auto.on/run_id"] == id.as_str())
            .count();
        assert!(
            writes <= 1,
            "{id}: the writing tool was called {writes} times"
        );
        let run = caller.get(&format!("{PLAYBOOK_PATH}/runs/{id}")).await;
        if run["status"] == "succeeded" {
            assert_eq!(writes, 1, "{id} succeeded without its write: {run:#}");
            notes += 1;
        } else {
            assert_eq!(run["problem"]["kind"], "effect_unknown", "{run:#}");
        }
    }
    // Each piece of news published during the faults reached the watcher once.
    let watch = caller.get(&format!("{PLAYBOOK_PATH}/runs/w-0")).await;
    assert_eq!(watch["status"], "succeeded", "{watch:#}");
    let taken = watch["output"].as_array().expect("the events taken");
    let ids: Vec<&str> = taken.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids, ["news-0", "news-1", "news-2"], "{watch:#}");
    for (n, event) in taken.iter().enumerate() {
        assert_eq!(event["data"], json!({"n": n}), "{watch:#}");
    }
    // One triggered run per event, each event's own.
    let ticks = of("workflow", "on-tick");
    assert_eq!(ticks.len(), units);
    let mut heard = BTreeSet::new();
    for tick in ticks {
        let id = tick["run_id"].as_str().expect("an id");
        let run = caller.get(&format!("{PLAYBOOK_PATH}/runs/{id}")).await;
        assert_eq!(run["status"], "succeeded", "{run:#}");
        assert!(heard.insert(run["output"]["tick"].as_u64().expect("a tick")));
    }
    assert_eq!(heard.len(), units);
    // The `every` trigger started one run per due time, however far apart the servers'
    // clocks were: no due time twice.
    let mut dues = BTreeSet::new();
    for beat in &beats {
        let id = beat["run_id"].as_str().expect("an id");
        let run = caller.get(&format!("{PLAYBOOK_PATH}/runs/{id}")).await;
        assert_eq!(run["status"], "succeeded", "{run:#}");
        let due = run["output"]["due"]
            .as_str()
            .expect("a due time")
            .to_owned();
        assert!(dues.insert(due.clone()), "{due} started twice");
    }
    // A minute's period: a run of the faults past a minute and ten seconds sees at least one.
    if seconds >= 70 {
        assert!(!beats.is_empty(), "the every trigger never started a run");
    }
    // Each request answered once.
    let requests = caller
        .all(&format!("{PLAYBOOK_PATH}/requests?limit=1000"), "requests")
        .await;
    assert_eq!(requests.len(), units);
    assert!(
        requests.iter().all(|r| r["status"] == "answered"),
        "{requests:#?}"
    );

    eprintln!(
        "chaos: CHAOS_SEED={seed}: {} runs ({} of them beats), {} events, faults {faults:?}, {} model requests, {} tool calls, {notes} of {units} notes written ({} effect_unknown); no run lost, none ended twice",
        runs.len(),
        beats.len(),
        events.len(),
        provider.requests().len(),
        calls.len(),
        units - notes
    );
    drop(cluster);
    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"
    )))
    .execute(&admin)
    .await;
}
