//! A stretch of a workflow run: its steps up to its next wait, committed as one. A call of a
//! computation function is pure, bounded (10 seconds) and deterministic, so it is performed in
//! the step that makes it: its child run, begun and ended, is recorded in the step's own
//! transaction, and its ending applied to the run at once, rather than going through the work
//! queue (the call as work, claimed, the child started, ended, its ending as work, claimed,
//! applied: a commit each). The child run, its facts and the call's ending are those the
//! queue gives.
//!
//! A call goes through the queue instead, as before, when performing it here could change what
//! happens: a type other than computation, a child id already taken, a definition missing,
//! retired or no longer parsing, a call too deep, a wait shorter than the program's bound, or a
//! stretch past [`STRETCH_CALLS_MAX`] calls or [`STRETCH_TIME_MS_MAX`]. And the queue applies a
//! run's inputs in the order they fall due: when one of them (a timer, an event, a cancel) falls
//! due before a performed child ends, the child is recorded but its ending goes as work, after
//! that input, and the calls after it go through the queue.

use std::collections::HashSet;
use std::time::Instant;

use auto_engine::computation::ComputationDocument;
use auto_store::EndedChild;

use super::calls::{call_outcome, caller_of};
use super::*;

/// The most calls one stretch performs before it commits; the rest go through the queue.
pub const STRETCH_CALLS_MAX: usize = 64;
/// How long a stretch performs calls before it commits; the calls after go through the queue.
pub const STRETCH_TIME_MS_MAX: u128 = 1_000;

/// Whether a stretch that has performed `performed` calls in `elapsed_ms` may perform one more.
fn may_go_on(performed: usize, elapsed_ms: u128) -> bool {
    performed < STRETCH_CALLS_MAX && elapsed_ms < STRETCH_TIME_MS_MAX
}

/// A call performed in a stretch: its child run, begun and ended, and the child's facts.
pub(crate) struct Performed {
    pub child: EndedChild,
    pub events: Vec<NewEvent>,
    /// How many of the run's own step events come before the child's.
    pub after: usize,
}

/// The engine's steps of one stretch merged into one, and the calls performed in it.
pub(crate) struct Stretch {
    pub step: Step,
    pub performed: Vec<Performed>,
    /// The endings of performed calls that go through the queue, after an input that fell
    /// due first.
    pub endings: Vec<NewWork>,
}

impl Stretch {
    /// The stretch of `step` alone, which performs none of its calls.
    pub(crate) fn unperformed(step: Step) -> Self {
        Self {
            step,
            performed: Vec::new(),
            endings: Vec::new(),
        }
    }
}

/// Whether a stretch may perform the call `command` makes, as far as the command tells.
pub(crate) fn may_perform(command: &Command) -> bool {
    matches!(
        command,
        Command::StartCall { def_type, wait_ms, .. }
            if def_type == DefinitionType::Computation.as_str()
                && *wait_ms >= auto_script::PROGRAM_TIME_MS_MAX
    )
}

/// The timers a stretch sets: those still set, with when they fall due, and those it set and
/// cancelled, which were never wanted as work.
#[derive(Default)]
struct Timers {
    due: HashMap<String, i64>,
    set: HashSet<String>,
    cancelled: HashSet<String>,
}

impl Timers {
    /// Takes note of a command that sets or cancels a timer.
    fn note(&mut self, command: &Command) {
        match command {
            Command::SetTimer { timer_id, due_ms } => {
                self.due.insert(timer_id.clone(), *due_ms);
                self.set.insert(timer_id.clone());
            }
            Command::CancelTimer { timer_id } => {
                self.due.remove(timer_id);
                if self.set.contains(timer_id) {
                    self.cancelled.insert(timer_id.clone());
                }
            }
            _ => {}
        }
    }

    /// Whether a timer still set falls due by `ms`.
    fn any_due_by(&self, ms: i64) -> bool {
        self.due.values().any(|due| *due <= ms)
    }

    /// Whether `command` goes to the store: not a timer the stretch set and cancelled.
    fn keeps(&self, command: &Command) -> bool {
        match command {
            Command::SetTimer { timer_id, .. } | Command::CancelTimer { timer_id } => {
                !self.cancelled.contains(timer_id)
            }
            _ => true,
        }
    }
}

/// A call the stretch may perform: its id, its child's run and the checked program.
struct Performable {
    call_id: String,
    new: NewRun,
    document: Arc<ComputationDocument>,
}

impl Service {
    /// Goes on from `step` (the run's first, or an input's): each call of a computation
    /// function it makes is performed and its ending applied, until the run waits for
    /// something else, ends, or the stretch is long enough. `applying` is the work item the
    /// step applies, which is not an input that falls due after it; `None` for a run recorded
    /// with this stretch, which has no inputs yet.
    pub(super) async fn stretch(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        place: &Place<'_>,
        step: Step,
        applying: Option<i64>,
    ) -> Stretch {
        let started = Instant::now();
        let Step {
            mut state,
            commands,
            mut events,
            mut ending,
        } = step;
        let mut queue: VecDeque<Command> = commands.into();
        let mut kept = Vec::new();
        let mut performed = Vec::new();
        let mut endings = Vec::new();
        let mut timers = Timers::default();
        // A run recorded with this stretch has no inputs and no children yet.
        let fresh = applying.is_none();
        // When the run's next input in the store falls due, read once, when first needed.
        let mut next_input: Option<Option<i64>> = fresh.then_some(None);
        // The definitions the stretch's calls name, read once each.
        let mut definitions = HashMap::new();
        // Once an ending goes through the queue, so do the calls after it.
        let mut queued = false;
        while let Some(command) = queue.pop_front() {
            timers.note(&command);
            let performable = match &command {
                Command::StartCall { .. }
                    if !queued
                        && ending.is_none()
                        && may_go_on(performed.len(), started.elapsed().as_millis()) =>
                {
                    self.performable(pb, run, &command, fresh, &mut definitions)
                        .await
                }
                _ => None,
            };
            let Some(Performable {
                call_id,
                new,
                document,
            }) = performable
            else {
                kept.push(command);
                continue;
            };
            let (child, child_events, outcome) = perform(new, document).await;
            let ended_ms = chrono::Utc::now().timestamp_millis();
            performed.push(Performed {
                child,
                events: child_events,
                after: events.len(),
            });
            if next_input.is_none() {
                let due = self.store.next_input_due(pb, &run.run_id, applying).await;
                // A store that cannot tell: the ending goes through the queue, in order.
                next_input =
                    Some(due.map_or(Some(i64::MIN), |due| due.map(|due| due.timestamp_millis())));
            }
            let due_first =
                timers.any_due_by(ended_ms) || next_input.flatten().is_some_and(|d| d <= ended_ms);
            let input = Input::CallEnded {
                call_id: call_id.clone(),
                outcome,
            };
            if due_first {
                queued = true;
                endings.push(WorkItem::from(input).to_work(ended_key(&call_id), None));
                continue;
            }
            let next = engine::apply(place.workflow, place.info, state, input, ended_ms);
            state = next.state;
            events.extend(next.events);
            ending = next.ending.or(ending);
            queue.extend(next.commands);
        }
        kept.retain(|command| timers.keeps(command));
        Stretch {
            step: Step {
                state,
                commands: kept,
                events,
                ending,
            },
            performed,
            endings,
        }
    }

    /// The call `command` makes, when the stretch may perform it; `None` sends it through the
    /// queue, which refuses or answers what this does not take.
    async fn performable(
        &self,
        pb: &PlaybookRef,
        parent: &Run,
        command: &Command,
        fresh: bool,
        definitions: &mut HashMap<String, Option<DefinitionVersion>>,
    ) -> Option<Performable> {
        let Command::StartCall {
            call_id,
            child_run_id,
            def_type,
            name,
            input,
            ..
        } = command
        else {
            return None;
        };
        if !may_perform(command) {
            return None;
        }
        let lineage = self.lineage(parent, call_id);
        if Self::call_refusal(&lineage).is_some() {
            return None;
        }
        let key = DefinitionKey::new(def_type, name);
        // Read once a stretch, and lent to each call of it rather than copied (its source).
        if !definitions.contains_key(name) {
            let read = self.store.get_definition(pb, &key).await.ok()?;
            definitions.insert(name.clone(), read);
        }
        let definition = definitions.get(name)?.as_ref()?;
        if definition.status == auto_store::DefinitionStatus::Retired {
            return None;
        }
        let checked = self.checked(pb, &key, definition.version, &definition.source)?;
        let document = checked.computation()?.clone();
        // A run recorded with this stretch has no children yet: its calls' ids are derived
        // from its own. (Should one be taken all the same, the store refuses the stretch and
        // it is committed again without performing its calls.)
        if !fresh && self.store.get_run(pb, child_run_id).await.ok()?.is_some() {
            return None;
        }
        let caller = caller_of(parent, pb);
        let mut new = new_run(
            child_run_id,
            &key,
            definition.version,
            input.clone(),
            &caller,
            Some(lineage),
            None,
        );
        // Its ending reaches the call here, and it is never open: it ends as it is recorded.
        new.ending_work = None;
        new.open_calls_max = None;
        Some(Performable {
            call_id: call_id.clone(),
            new,
            document,
        })
    }
}

/// Performs a computation's run: the child as the store records it, its facts, and the
/// call's ending.
async fn perform(
    new: NewRun,
    document: Arc<ComputationDocument>,
) -> (EndedChild, Vec<NewEvent>, CallOutcome) {
    let mut run = crate::runs::started_run(&new, chrono::Utc::now());
    let ending = crate::runner::computation_ending(&run, document).await;
    let events = vec![started_fact(&new, 1), ending_fact(&run, 2, &ending)];
    run.status = ending.status;
    run.output = ending.output.clone();
    run.problem = ending.problem.clone();
    let outcome = call_outcome(&run);
    (EndedChild { run: new, ending }, events, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stretch performs up to its limits and no call past them: at `STRETCH_CALLS_MAX - 1`
    /// calls performed it takes one more (the limit's), at the limit none; the same for time,
    /// up to `STRETCH_TIME_MS_MAX`.
    #[test]
    fn a_stretch_goes_on_up_to_its_calls_and_its_time() {
        assert!(may_go_on(0, 0));
        assert!(may_go_on(STRETCH_CALLS_MAX - 1, 0));
        assert!(!may_go_on(STRETCH_CALLS_MAX, 0));
        assert!(may_go_on(0, STRETCH_TIME_MS_MAX - 1));
        assert!(!may_go_on(0, STRETCH_TIME_MS_MAX));
        assert!(!may_go_on(STRETCH_CALLS_MAX, STRETCH_TIME_MS_MAX));
    }
}
