//! Errors raised and caught: the error a raise task raises, a try task's attempts, the errors its catch takes, the delays of its
//! retry policy.

use super::*;

impl Engine<'_> {
    /// The error a raise task raises: inline, named in use.errors, or computed.
    pub(super) fn raised_error(
        &mut self,
        info: &TaskInfo,
        vars: &Vars<'_>,
    ) -> Result<WorkflowError, WorkflowError> {
        let wf = self.wf;
        let written = wf
            .field(info, "raise/error")
            .cloned()
            .unwrap_or(Value::Null);
        let template = match &written {
            Value::String(name) if crate::workflow::expressions::enclosed(name).is_none() => wf
                .raw(&format!("/use/errors/{}", pointer_escape(name)))
                .cloned()
                .unwrap_or(Value::Null),
            other => other.clone(),
        };
        let value = self.template(&template, vars)?;
        let no_error = || {
            WorkflowError::configuration(
                "The raise names no error with a type and a status from 100 to 599.",
            )
        };
        let error_type = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(no_error)?;
        let status = value
            .get("status")
            .and_then(Value::as_u64)
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(no_error)?;
        let text = |field: &str| match value.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        Ok(WorkflowError {
            error_type: error_type.to_owned(),
            status: status as u16,
            instance: text("instance").unwrap_or_default(),
            title: text("title"),
            detail: text("detail"),
            kind: text("kind"),
            because: text("because"),
            issues: value.get("issues").filter(|v| !v.is_null()).cloned(),
            step: String::new(),
        }
        .at(&info.pointer, &info.name))
    }

    /// Goes on with a try task: its body's attempt, the catch that takes its error, the
    /// retry's delay and the catch's own tasks, one phase after another in one function so
    /// the phases' hand-overs read in order; that is why it is long.
    pub(super) fn drive_try(
        &mut self,
        run: &mut TaskRun,
        locals: &[(String, Value)],
        input: Value,
    ) -> TaskEnd {
        let wf = self.wf;
        let info = wf.task(&run.pointer);
        let Kind::Try { list, recovery } = &info.kind else {
            return TaskEnd::Abort(WorkflowError::runtime("The task is not a try."));
        };
        let Body::Try {
            retries,
            first_ms,
            phase,
            attempt_timer,
            attempt_timed_out,
        } = &mut run.body
        else {
            return TaskEnd::Abort(WorkflowError::runtime("The task is not a try."));
        };
        loop {
            match phase {
                TryPhase::Delay { fired, .. } => {
                    if !*fired {
                        return TaskEnd::Waiting;
                    }
                    *phase = TryPhase::Trying {
                        frame: Frame::new(list, input.clone(), locals.to_vec()),
                    };
                }
                TryPhase::Recovering { frame } => return self.drive_list(frame).into(),
                TryPhase::Trying { frame } => {
                    let flow = if *attempt_timed_out {
                        *attempt_timed_out = false;
                        *attempt_timer = None;
                        let mut commands = Vec::new();
                        cancel_frame(frame, "deadline", &mut commands);
                        self.commands.extend(commands);
                        Flow::Raised(
                            WorkflowError::timeout(format!(
                                "An attempt of the step {} ran past its limit.",
                                info.name
                            ))
                            .at(&info.pointer, &info.name),
                        )
                    } else {
                        self.drive_list(frame)
                    };
                    let error = match flow {
                        Flow::Waiting => {
                            if attempt_timer.is_none()
                                && let Some(ms) = self.attempt_limit(info, &input, locals)
                            {
                                let due = self.now_ms.saturating_add(ms as i64);
                                *attempt_timer =
                                    Some(self.set_timer("attempt", &info.pointer, due));
                            }
                            return TaskEnd::Waiting;
                        }
                        Flow::Raised(error) => error,
                        other => {
                            if let Some(timer) = attempt_timer.take() {
                                self.cancel_timer(&timer);
                            }
                            return other.into();
                        }
                    };
                    if let Some(timer) = attempt_timer.take() {
                        self.cancel_timer(&timer);
                    }
                    match self.catch(info, &input, &error, locals, *retries, *first_ms) {
                        Err(failure) => return TaskEnd::Raised(failure),
                        Ok(Caught::No) => return TaskEnd::Raised(error),
                        Ok(Caught::Retry(delay_ms)) => {
                            *retries += 1;
                            self.event(
                                "step_retried",
                                info,
                                json!({ "retry": *retries, "delay_ms": delay_ms, "error": error.to_value() }),
                            );
                            if delay_ms == 0 {
                                *phase = TryPhase::Trying {
                                    frame: Frame::new(list, input.clone(), locals.to_vec()),
                                };
                            } else {
                                let due = self.now_ms.saturating_add(delay_ms as i64);
                                let timer_id = self.set_timer("retry", &info.pointer, due);
                                *phase = TryPhase::Delay {
                                    timer_id,
                                    fired: false,
                                };
                                return TaskEnd::Waiting;
                            }
                        }
                        Ok(Caught::Recover) => {
                            let Some(recovery) = recovery else {
                                // "Without catch.do, a task whose retries ran out hands on its
                                // own input as its output."
                                return TaskEnd::Done(input, None);
                            };
                            let name = wf
                                .field(info, "catch/as")
                                .and_then(Value::as_str)
                                .map_or_else(|| "$error".to_owned(), |n| format!("${n}"));
                            let mut inner = locals.to_vec();
                            inner.retain(|(n, _)| *n != name);
                            inner.push((name, error.to_value()));
                            *phase = TryPhase::Recovering {
                                frame: Frame::new(recovery, input.clone(), inner),
                            };
                        }
                    }
                }
            }
        }
    }

    /// `limit.attempt.duration` of the catch's retry policy, when it has one.
    pub(super) fn attempt_limit(
        &mut self,
        info: &TaskInfo,
        input: &Value,
        locals: &[(String, Value)],
    ) -> Option<u64> {
        let policy = self.retry_policy(info)?;
        let duration = policy.pointer("/limit/attempt/duration")?.clone();
        let vars = Vars {
            data: Some(input),
            input: Some(input),
            locals,
            ..Vars::default()
        };
        self.duration(&duration, &vars).ok()
    }

    pub(super) fn retry_policy(&self, info: &TaskInfo) -> Option<Value> {
        let wf = self.wf;
        match wf.field(info, "catch/retry")? {
            Value::String(name) => wf
                .raw(&format!("/use/retries/{}", pointer_escape(name)))
                .cloned(),
            other => Some(other.clone()),
        }
    }

    /// Whether the catch takes `error`, and then whether a retry remains: its `errors.with`,
    /// `when`, `exceptWhen`, then the retry's limits in the page's order, which is why it is
    /// long.
    pub(super) fn catch(
        &mut self,
        info: &TaskInfo,
        input: &Value,
        error: &WorkflowError,
        locals: &[(String, Value)],
        retries: u32,
        first_ms: i64,
    ) -> Result<Caught, WorkflowError> {
        let wf = self.wf;
        let catch = wf.field(info, "catch").cloned().unwrap_or(Value::Null);
        if let Some(Value::Object(with)) = catch.pointer("/errors/with")
            && !error.matches(with)
        {
            return Ok(Caught::No);
        }
        let name = catch
            .get("as")
            .and_then(Value::as_str)
            .map_or_else(|| "$error".to_owned(), |n| format!("${n}"));
        // The catch's conditions read the error under its name; a retry policy, which may sit
        // in use.retries, reads it as $error.
        let mut inner = locals.to_vec();
        inner.retain(|(n, _)| *n != name && n != "$error");
        inner.push(("$error".to_owned(), error.to_value()));
        if name != "$error" {
            inner.push((name, error.to_value()));
        }
        let vars = Vars {
            data: Some(input),
            input: Some(input),
            locals: &inner,
            ..Vars::default()
        };
        let placed = |e: WorkflowError| e.at(&info.pointer, &info.name);
        if let Some(when) = catch.get("when")
            && !self.condition(when, &vars).map_err(placed)?
        {
            return Ok(Caught::No);
        }
        if let Some(except) = catch.get("exceptWhen")
            && self.condition(except, &vars).map_err(placed)?
        {
            return Ok(Caught::No);
        }
        let Some(policy) = self.retry_policy(info) else {
            return Ok(Caught::Recover);
        };
        if let Some(count) = policy
            .pointer("/limit/attempt/count")
            .and_then(Value::as_u64)
            && u64::from(retries) >= count
        {
            return Ok(Caught::Recover);
        }
        if let Some(when) = policy.get("when")
            && !self.condition(when, &vars).map_err(placed)?
        {
            return Ok(Caught::Recover);
        }
        if let Some(except) = policy.get("exceptWhen")
            && self.condition(except, &vars).map_err(placed)?
        {
            return Ok(Caught::Recover);
        }
        let retry = retries + 1;
        let mut delay = match policy.get("delay") {
            Some(delay) => self.duration(delay, &vars).map_err(placed)? as f64,
            None => 0.0,
        };
        let backoff = policy.get("backoff").and_then(Value::as_object);
        if backoff.is_some_and(|b| b.contains_key("linear")) {
            delay *= f64::from(retry);
        } else if backoff.is_some_and(|b| b.contains_key("exponential")) {
            delay *= 2f64.powi(i32::try_from(retry - 1).unwrap_or(i32::MAX).min(1_000));
        }
        if let Some(jitter) = policy.get("jitter") {
            let from = match jitter.get("from") {
                Some(v) => self.duration(v, &vars).map_err(placed)? as f64,
                None => 0.0,
            };
            let to = match jitter.get("to") {
                Some(v) => self.duration(v, &vars).map_err(placed)? as f64,
                None => from,
            };
            let fraction = ids::fraction(&self.info.run_id, &info.pointer, retry);
            delay += from + (to - from).max(0.0) * fraction;
        }
        let delay = delay.min(self.run_duration_ms as f64).max(0.0).round() as u64;
        // "No retry starts once this much time has passed since the first attempt": the
        // retry would start when its delay ends.
        if let Some(limit) = policy.pointer("/limit/duration") {
            let ms = self.duration(limit, &vars).map_err(placed)?;
            let starts_ms = self
                .now_ms
                .saturating_add(i64::try_from(delay).unwrap_or(i64::MAX));
            if starts_ms.saturating_sub(first_ms) >= i64::try_from(ms).unwrap_or(i64::MAX) {
                return Ok(Caught::Recover);
            }
        }
        Ok(Caught::Retry(delay))
    }
}

pub(super) enum Caught {
    No,
    Retry(u64),
    Recover,
}
