//! Schedules: a schedule trigger's first due time once saved, a run for the latest time it
//! missed when one fell due (unless its previous run still runs), then its next time.

use super::*;

impl Service {
    /// A schedule trigger: its first due time once saved; when a time fell due, a run for the
    /// latest time it missed, unless its previous run still runs; then its next time. The
    /// page's steps in its order, each deciding on what the one before found, which is why it
    /// is long.
    pub(super) async fn schedule(&self, trigger: &Trigger) -> Result<(), Problem> {
        let pb = &trigger.playbook;
        let now_ms = Utc::now().timestamp_millis() + self.limits.clock_offset_ms;
        let base = trigger.saved_at.timestamp_millis();
        let (next_after, latest_at): (TimeFn, TimeFn) = match trigger.kind.as_str() {
            "every" => {
                let period = trigger.spec["milliseconds"]
                    .as_i64()
                    .unwrap_or(60_000)
                    .max(1);
                (
                    Box::new(move |t: i64| Some(base + ((t - base).max(0) / period + 1) * period)),
                    Box::new(move |t: i64| {
                        (t >= base + period).then(|| base + (t - base) / period * period)
                    }),
                )
            }
            _ => {
                let text = trigger.spec["expression"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let text2 = text.clone();
                (
                    Box::new(move |t: i64| cron_next_ms(&text, t)),
                    Box::new(move |t: i64| cron_latest_ms(&text2, t).filter(|at| *at > base)),
                )
            }
        };
        let reference = format!("/schedule/{}", trigger.kind);
        let Some(due_at) = trigger.due_at else {
            let Some(first) = next_after(base) else {
                return Ok(());
            };
            self.move_schedule(trigger, first, None).await?;
            return Ok(());
        };
        let due_ms = due_at.timestamp_millis();
        if due_ms > now_ms {
            return Ok(());
        }
        let latest = latest_at(now_ms).unwrap_or(due_ms).max(due_ms);
        let Some(next) = next_after(now_ms) else {
            return Ok(());
        };
        if let Some(running) = &trigger.running_run_id {
            let run = self
                .store
                .get_run(pb, running)
                .await
                .map_err(store_problem)?;
            if run.is_some_and(|run| run.status == RunStatus::Started) {
                if self.move_schedule(trigger, next, None).await? {
                    self.refuse(
                        pb,
                        &trigger.workflow,
                        &trigger.kind,
                        format!(
                            "the time {} came while its run {running} still ran",
                            time_text(latest)
                        ),
                    );
                }
                return Ok(());
            }
        }
        let due = time_text(latest);
        let run_id = triggered_run_id(&trigger.workflow, trigger.version, &reference, &due);
        let origin = Origin {
            depth: 1,
            trigger: json!({"kind": trigger.kind, "reference": reference, "due": due}),
        };
        let input = json!({ "schedule": { "due": due } });
        let started = self
            .start_triggered(
                pb,
                &trigger.workflow,
                trigger.version,
                &run_id,
                input,
                origin,
            )
            .await;
        let tries_key = (
            pb.clone(),
            trigger.workflow.clone(),
            trigger.kind.clone(),
            latest,
        );
        match started {
            Ok(()) => {
                self.triggers.memory().schedule_tries.remove(&tries_key);
                self.move_schedule(trigger, next, Some(&run_id)).await?;
            }
            Err(NotStarted::Again(reason)) => {
                let tries = {
                    let mut memory = self.triggers.memory();
                    let tries = memory.schedule_tries.entry(tries_key.clone()).or_default();
                    *tries += 1;
                    *tries
                };
                if tries >= START_TRIES_MAX {
                    self.triggers.memory().schedule_tries.remove(&tries_key);
                    if self.move_schedule(trigger, next, None).await? {
                        self.refuse(
                            pb,
                            &trigger.workflow,
                            &trigger.kind,
                            format!("it was tried {START_TRIES_MAX} times: {reason}"),
                        );
                    }
                }
            }
            Err(NotStarted::Refused(reason)) => {
                if self.move_schedule(trigger, next, None).await? {
                    self.refuse(pb, &trigger.workflow, &trigger.kind, reason);
                }
            }
        }
        Ok(())
    }

    async fn move_schedule(
        &self,
        trigger: &Trigger,
        due_ms: i64,
        running_run_id: Option<&str>,
    ) -> Result<bool, Problem> {
        let due_at = DateTime::<Utc>::from_timestamp_millis(due_ms).unwrap_or_default();
        self.store
            .move_schedule(
                &trigger.playbook,
                &trigger.workflow,
                &trigger.kind,
                trigger.since_seq,
                trigger.due_at,
                due_at,
                running_run_id,
            )
            .await
            .map_err(store_problem)
    }
}
