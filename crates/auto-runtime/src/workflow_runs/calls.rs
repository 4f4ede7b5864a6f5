//! A workflow's calls: a child run started under its derived id, within the limits on calls
//! above a run and at once under one tree; its ending handed to the call that waits for it; a
//! call cancelled when its task stops waiting.

use super::*;

/// What a call's attempt at its child came to.
enum Called {
    /// The child ended, or was refused: the call ends with it.
    Ended(CallOutcome),
    /// The child goes on; its ending reaches the parent through the store.
    GoesOn,
    /// An attempt at the child goes on elsewhere, or stopped with its server: the call is left
    /// to its lease and claimed again.
    Later,
}

impl Service {
    /// A child's ending, which the store added to its parent when the child ended: the
    /// child's output or problem, applied as the call's ending.
    pub(crate) async fn child_ended(&self, item: &Work, ended: ChildEnded) -> Result<(), Problem> {
        let pb = &item.playbook;
        let ChildEnded {
            call_id,
            child_run_id,
        } = ended;
        let child = self
            .store
            .get_run(pb, &child_run_id)
            .await
            .map_err(store_problem)?;
        let Some(child) = child.filter(|r| r.status != RunStatus::Started) else {
            // Started again since (a retry under its id): its next ending tells the parent.
            return self.store.finish_work(item.id).await.map_err(store_problem);
        };
        let outcome = call_outcome(&child);
        self.apply_input(item, Input::CallEnded { call_id, outcome })
            .await
    }

    /// Starts a child run, or finds it by its id. A child that ends within the call (a
    /// reasoning or computation function) ends the call here; one that goes on (a workflow, a
    /// person's answer) records its parent and call, and its ending reaches the parent through
    /// the store whenever and wherever it comes: the call holds nothing while it waits.
    pub(crate) async fn start_call(&self, item: &Work, call: StartCall) -> Result<(), Problem> {
        let pb = &item.playbook;
        let StartCall {
            call_id,
            child_run_id,
            def_type,
            name,
            input,
            wait_ms: _,
        } = call;
        let parent = self
            .store
            .get_run(pb, &item.run_id)
            .await
            .map_err(store_problem)?;
        let Some(parent) = parent.filter(|r| r.status == RunStatus::Started) else {
            return self.store.finish_work(item.id).await.map_err(store_problem);
        };
        let lineage = self.lineage(&parent, &call_id);
        let known = self
            .store
            .get_run(pb, &child_run_id)
            .await
            .map_err(store_problem)?
            .is_some();
        let refusal = if known {
            None
        } else {
            Self::call_refusal(&lineage)
        };
        let called = match refusal {
            Some(problem) => Called::Ended(CallOutcome::Rejected { problem }),
            None => {
                let ask = Ask {
                    run_id: child_run_id,
                    input,
                    lineage: Some(lineage),
                    origin: None,
                    fresh: false,
                };
                self.call_child(pb, &parent, &def_type, &name, ask).await?
            }
        };
        let outcome = match called {
            Called::Ended(outcome) => Some(outcome),
            // Its ending reaches the parent through the store.
            Called::GoesOn => None,
            Called::Later => return Ok(()),
        };
        if let Some(outcome) = outcome {
            // The store may have added the same ending when the child ended; the first stays.
            let ended = Input::CallEnded {
                call_id: call_id.clone(),
                outcome,
            };
            self.store
                .add_work(
                    pb,
                    &item.run_id,
                    vec![WorkItem::from(ended).to_work(ended_key(&call_id), None)],
                )
                .await
                .map_err(store_problem)?;
        }
        self.store
            .finish_work(item.id)
            .await
            .map_err(store_problem)?;
        self.scheduler.wake();
        Ok(())
    }

    /// Where the child of `parent`'s call `call_id` sits among the runs.
    pub(crate) fn lineage(&self, parent: &Run, call_id: &str) -> Lineage {
        Lineage {
            parent_run_id: parent.run_id.clone(),
            parent_call_id: call_id.to_owned(),
            task_reference: call_reference(call_id).to_owned(),
            call_depth: parent.call_depth.unwrap_or(0) + 1,
            root_run_id: parent
                .root_run_id
                .clone()
                .unwrap_or_else(|| parent.run_id.clone()),
            open_calls_max: i64::from(self.limits.workflow_max_open_calls),
            depth: parent.depth,
        }
    }

    /// Runs a call's child as its parent's caller, under the run-id rules.
    async fn call_child(
        &self,
        pb: &PlaybookRef,
        parent: &Run,
        def_type: &str,
        name: &str,
        ask: Ask,
    ) -> Result<Called, Problem> {
        let child_run_id = ask.run_id.clone();
        // A call the store failed under is made again, under the same run id, rather than
        // answered with the fault.
        let caller = caller_of(parent, pb);
        let answer = match def_type.parse::<DefinitionType>() {
            Ok(def_type) => {
                retrying_faults(crate::service::is_store_fault, || {
                    self.run(&caller, pb, def_type, name, ask.clone())
                })
                .await
            }
            Err(_) => Err(definition_not_found(pb, def_type, name)),
        };
        let rejected = |problem: Problem| Called::Ended(CallOutcome::Rejected { problem });
        Ok(match answer {
            Ok(RunAnswer::Ended(run)) => Called::Ended(CallOutcome::Succeeded {
                output: run.output.unwrap_or(Value::Null),
            }),
            Ok(RunAnswer::Rejected(problem)) => rejected(problem),
            Ok(RunAnswer::Started(_)) => Called::GoesOn,
            // An attempt goes on elsewhere, or stopped with its server: the call is claimed
            // again when its lease ends, and finds the child then.
            Err(problem) if problem.kind.as_deref() == Some("taken") => Called::Later,
            // The server broke down on the way, or its store's fault did not clear: unless the
            // child was recorded and ended, which its ending tells, it "could not be reached",
            // a communication error 503 that a retry may resolve.
            Err(problem)
                if problem.reason == Reason::Failed || crate::service::is_store_fault(&problem) =>
            {
                let child = self
                    .store
                    .get_run(pb, &child_run_id)
                    .await
                    .map_err(store_problem)?;
                match child {
                    Some(child) if child.status != RunStatus::Started => {
                        Called::Ended(call_outcome(&child))
                    }
                    Some(_) => Called::Later,
                    // Without a title: the call's error takes the page's words.
                    None => rejected(Problem::new(
                        Reason::Unavailable,
                        "",
                        format!("The run could not be started: {}", problem.detail),
                    )),
                }
            }
            Err(problem) => rejected(problem),
        })
    }

    /// Why a new child may not start: "Workflows that call workflows reach at most 8 calls
    /// deep". It is refused as a conflict, which the calling task raises as a runtime error;
    /// so is a child past the calls its tree may wait for at once (`WORKFLOW_MAX_OPEN_CALLS`),
    /// which the store counts as it records the child.
    pub(crate) fn call_refusal(lineage: &Lineage) -> Option<Problem> {
        if lineage.call_depth > CALL_DEPTH_MAX {
            return Some(Problem::conflict(
                "The call goes too deep",
                format!(
                    "The run would sit {} calls below the workflow at the top; workflows that call workflows reach at most 8 calls deep.",
                    lineage.call_depth
                ),
            ));
        }
        None
    }

    /// Cancels a child the parent no longer waits for.
    pub(crate) async fn cancel_call(&self, item: &Work, call: &CancelCall) -> Result<(), Problem> {
        let pb = &item.playbook;
        let child_run_id = call.child_run_id.as_str();
        let kind = call.kind.as_str();
        if let Some(child) = self
            .store
            .get_run(pb, child_run_id)
            .await
            .map_err(store_problem)?
            .filter(|r| r.status == RunStatus::Started)
        {
            let words = format!(
                "The workflow run {} no longer waits for this run ({kind}).",
                item.run_id
            );
            let caller = caller_of(&child, pb);
            let cancelled = if child.key.def_type == DefinitionType::Interaction.as_str() {
                self.cancel_interaction(pb, &child, &words, kind).await
            } else {
                self.cancel_run_as(
                    &caller,
                    pb,
                    child_run_id,
                    crate::api::CancelRun {
                        detail: Some(words),
                    },
                    Some(kind),
                )
                .await
                .map(|_| ())
            };
            if let Err(problem) = cancelled {
                tracing::debug!(detail = %problem.detail, "a child could not be cancelled");
            }
        }
        self.store.finish_work(item.id).await.map_err(store_problem)
    }
}

/// The reference of the task a call id names: `call:<reference>#<attempt>`.
pub(crate) fn call_reference(call_id: &str) -> &str {
    let reference = call_id.strip_prefix("call:").unwrap_or(call_id);
    reference.rsplit_once('#').map_or(reference, |(r, _)| r)
}

/// How a child's run ended, as its parent's call takes it.
pub(crate) fn call_outcome(child: &Run) -> CallOutcome {
    match (child.status, &child.problem) {
        (RunStatus::Succeeded, _) => CallOutcome::Succeeded {
            output: child.output.clone().unwrap_or(Value::Null),
        },
        (_, problem) => CallOutcome::Rejected {
            problem: problem.as_ref().and_then(Problem::read).unwrap_or_else(|| {
                Problem::new(
                    Reason::Failed,
                    format!("The run {} failed", child.run_id),
                    "The run ended without a problem document.",
                )
            }),
        },
    }
}

/// The caller a run acts for: who started it, within its org.
pub(crate) fn caller_of(run: &Run, pb: &PlaybookRef) -> Caller {
    if run.started_by == crate::auth::LOCAL_CALLER {
        return Caller::local();
    }
    Caller {
        id: run.started_by.clone(),
        org: Some(pb.org.clone()),
        role: Role::Runner,
    }
}
