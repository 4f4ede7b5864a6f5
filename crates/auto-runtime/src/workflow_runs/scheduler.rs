//! The scheduler: each server claims due work from the store (a claim is a lease), applies
//! one run's inputs in the order received, one at a time, and carries out the orders beside
//! them at once; a passing store fault is outlasted rather than answered.

use super::*;

/// How long a server holds the work it claimed by default (`[scheduler] lease_ms` sets it);
/// past it, another server may take it. A call whose child runs longer may be claimed again
/// meanwhile: the child's derived run id makes the second claim find the same run rather than
/// start another, and its ending is added once.
pub const WORK_LEASE: Duration = Duration::from_millis(crate::limits::WORK_LEASE_MS_DEFAULT);
/// How long a run's task waits before it tries again an input it could not apply (a fault
/// that outlasted the step's own retries, an item this server cannot read): doubled at each
/// failure of the same input in a row, up to the lease.
pub const INPUT_RETRY_PAUSE: Duration = Duration::from_secs(1);
/// How many items one claim takes.
pub const WORK_BATCH: u32 = 32;
/// The longest the scheduler sleeps without looking for due work.
pub const IDLE_POLL: Duration = Duration::from_millis(500);
/// How many times a step whose commit, or whose call, met a passing store fault (a cut
/// connection, a busy or full database: `StoreError::is_transient`) is tried again before the
/// fault counts, and the pause before the first retry, doubled each time: 0.1 s to 1.6 s,
/// about 3 seconds in all, which a database's restart or a pool's reconnection fits in.
pub const STORE_FAULT_RETRIES: u32 = 5;
pub const STORE_FAULT_PAUSE: Duration = Duration::from_millis(100);

/// Runs `attempt` again while it fails with a passing store fault, at most
/// [`STORE_FAULT_RETRIES`] more times with a growing pause; the last answer stands.
pub(crate) async fn retrying_faults<T, E, Fut>(
    is_fault: impl Fn(&E) -> bool,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, E>
where
    E: std::fmt::Debug,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut pause = STORE_FAULT_PAUSE;
    for _ in 0..STORE_FAULT_RETRIES {
        match attempt().await {
            Err(error) if is_fault(&error) => {
                tracing::warn!(
                    ?error,
                    "a workflow step met a store fault; it is tried again"
                );
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            other => return other,
        }
    }
    attempt().await
}

/// The inputs of each run this server is applying: the run's claimed inputs not applied yet,
/// in work id order, which is the order they were received. A run is in the map while a task
/// applies its inputs; it applies them one at a time, so "a run's inputs apply in the order
/// they were received", and never two of one run at once.
type RunQueues = HashMap<(PlaybookRef, String), VecDeque<Work>>;

/// What wakes the scheduler, and the inputs of each run it holds.
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// The id its claims are held under in the store, new for each server: the store hands
    /// it a run's next inputs while it holds an earlier one, and no other server.
    claimer: Arc<str>,
    wake: Arc<Notify>,
    queues: Arc<Mutex<RunQueues>>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
    /// How many work items this server could not read: each is kept, told in the log and
    /// counted the first time, and tried again later (by another server once its lease ends).
    pub unreadable: prometheus_client::metrics::counter::Counter,
    /// The items already counted in `unreadable`.
    unreadable_seen: Arc<Mutex<std::collections::HashSet<i64>>>,
}

impl Scheduler {
    /// The id this server holds leases under: its work claims, and the recall views it folds.
    pub(crate) fn holder(&self) -> &str {
        &self.claimer
    }
}

impl Default for Scheduler {
    fn default() -> Self {
        Self {
            claimer: uuid::Uuid::now_v7().to_string().into(),
            wake: Arc::default(),
            queues: Arc::default(),
            stopping: Arc::default(),
            unreadable: Default::default(),
            unreadable_seen: Arc::default(),
        }
    }
}

impl Scheduler {
    /// Counts the work item `id` as unreadable, if it was not yet: whether it is the first
    /// time this server found it so.
    pub fn count_unreadable(&self, id: i64) -> bool {
        let first = (self.unreadable_seen.lock())
            .unwrap_or_else(|p| p.into_inner())
            .insert(id);
        if first {
            self.unreadable.inc();
        }
        first
    }

    /// Tells the scheduler that work was added.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Asks the scheduler to claim no more work. It stops between claims, never inside one:
    /// a claim cut off after the store leased its items would leave them to wait out the
    /// lease with nobody working on them.
    pub fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.wake.notify_one();
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Queues a claimed input of a run. `Some` when no task applies the run's inputs: the
    /// caller starts one with this item; otherwise the run's task takes it in its turn, after
    /// the inputs received before it. An item already queued (claimed again when its lease
    /// ran out) is queued once.
    pub(crate) fn queue(&self, item: Work) -> Option<Work> {
        let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        let slot = (item.playbook.clone(), item.run_id.clone());
        match queues.get_mut(&slot) {
            Some(queue) => {
                if let Err(at) = queue.binary_search_by_key(&item.id, |w| w.id) {
                    queue.insert(at, item);
                }
                None
            }
            None => {
                queues.insert(slot, VecDeque::new());
                Some(item)
            }
        }
    }

    /// The run's next queued input, or `None` when it has none: then its task ends, and the
    /// run's next input starts another.
    pub(crate) fn next_of(&self, playbook: &PlaybookRef, run_id: &str) -> Option<Work> {
        let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        let slot = (playbook.clone(), run_id.to_owned());
        let next = queues.get_mut(&slot).and_then(VecDeque::pop_front);
        if next.is_none() {
            queues.remove(&slot);
        }
        next
    }
}

/// Runs the scheduler of this server until the process ends.
pub fn spawn_scheduler(service: Service) -> tokio::task::JoinHandle<()> {
    let lease = Duration::from_millis(service.limits.work_lease_ms);
    tokio::spawn(async move {
        while !service.scheduler.is_stopping() {
            let claimed = match service
                .store
                .claim_work(&service.scheduler.claimer, lease, WORK_BATCH)
                .await
            {
                Ok(claimed) => claimed,
                Err(error) => {
                    tracing::warn!(%error, "the scheduler cannot claim work");
                    tokio::time::sleep(IDLE_POLL).await;
                    continue;
                }
            };
            if claimed.is_empty() {
                let wait = match service.store.next_work_due().await {
                    Ok(Some(due)) => (due - chrono::Utc::now())
                        .to_std()
                        .unwrap_or(Duration::ZERO)
                        .min(IDLE_POLL),
                    _ => IDLE_POLL,
                };
                tokio::select! {
                    () = service.scheduler.wake.notified() => {}
                    () = tokio::time::sleep(wait.max(Duration::from_millis(5))) => {}
                }
                continue;
            }
            // The store hands the items oldest first; one run's inputs are queued and applied
            // in work id order, which is the order they were received.
            let mut claimed = claimed;
            claimed.sort_by_key(|item| item.id);
            for item in claimed {
                let service = service.clone();
                // An input of its run, applied to its snapshot, goes after the run's inputs
                // before it; a command carried out beside the run (a call to start, a child
                // to cancel, a request to deliver or expire) may take long and goes at once.
                if !item.ordered {
                    tokio::spawn(async move { service.handle_work(&item).await });
                    continue;
                }
                if let Some(first) = service.scheduler.queue(item) {
                    tokio::spawn(apply_in_turn(service, first, lease));
                }
            }
        }
    })
}

/// Applies a run's inputs one at a time, `first` first, then each queued after it, until the
/// run has none queued. An input that could not be applied (or whose step panicked) is tried
/// again after a pause, before any input after it: going on with the next would apply it
/// before the one received earlier, and while this server holds that one claimed, the store
/// goes on handing it the run's later inputs (see `Store::claim_work`). The pause doubles at
/// each failure in a row, up to the lease; once the lease has passed, another server may
/// have taken the input and applied it, and the engine takes an input applied twice once (an
/// event by its id, a timer or a call by theirs).
async fn apply_in_turn(service: Service, first: Work, lease: Duration) {
    let (playbook, run_id) = (first.playbook.clone(), first.run_id.clone());
    let mut next = Some(first);
    let mut failures: u32 = 0;
    while let Some(item) = next {
        // On a task of its own, so that a panic is a failure of its input alone.
        let (each, item) = (service.clone(), Arc::new(item));
        let held = Arc::clone(&item);
        let done = tokio::spawn(async move { each.handle_work(&held).await });
        if done.await.unwrap_or(false) {
            failures = 0;
            next = service.scheduler.next_of(&playbook, &run_id);
            continue;
        }
        let pause = INPUT_RETRY_PAUSE
            .saturating_mul(1 << failures.min(16))
            .min(lease);
        failures = failures.saturating_add(1);
        tokio::time::sleep(pause).await;
        // The step's task has ended (or unwound), so the input is this task's alone again.
        next = Some(Arc::try_unwrap(item).unwrap_or_else(|shared| (*shared).clone()));
    }
}
