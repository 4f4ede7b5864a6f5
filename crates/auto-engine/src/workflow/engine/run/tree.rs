//! The task tree: cancelling what a frame or task has under way, finding the task a timer or
//! a call's ending belongs to, and the small words of the tree.

use super::*;

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A name as one segment of a JSON pointer.
pub(super) fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The cancels for everything a list under way waits for.
pub(super) fn cancel_frame(frame: &Frame, kind: &str, commands: &mut Vec<Command>) {
    if let Some(run) = &frame.task {
        if let Some(timer) = &run.timeout_timer
            && !run.timed_out
        {
            commands.push(Command::CancelTimer {
                timer_id: timer.clone(),
            });
        }
        cancel_body(&run.body, kind, commands);
    }
}

pub(super) fn cancel_body(body: &Body, kind: &str, commands: &mut Vec<Command>) {
    match body {
        Body::Do { frame } => cancel_frame(frame, kind, commands),
        Body::For { frame, .. } => {
            if let Some(frame) = frame {
                cancel_frame(frame, kind, commands);
            }
        }
        Body::Try {
            phase,
            attempt_timer,
            attempt_timed_out,
            ..
        } => {
            if let Some(timer) = attempt_timer
                && !attempt_timed_out
            {
                commands.push(Command::CancelTimer {
                    timer_id: timer.clone(),
                });
            }
            match phase {
                TryPhase::Trying { frame } | TryPhase::Recovering { frame } => {
                    cancel_frame(frame, kind, commands);
                }
                TryPhase::Delay { timer_id, fired } => {
                    if !fired {
                        commands.push(Command::CancelTimer {
                            timer_id: timer_id.clone(),
                        });
                    }
                }
            }
        }
        Body::Fork { branches } => {
            for branch in branches {
                if let Branch::Running { frame } = branch {
                    cancel_frame(frame, kind, commands);
                }
            }
        }
        Body::Call {
            call_id,
            child_run_id,
            wait_timer,
            delivered,
            ..
        } => {
            if delivered.is_none() {
                commands.push(Command::CancelCall {
                    call_id: call_id.clone(),
                    child_run_id: child_run_id.clone(),
                    kind: kind.to_owned(),
                });
                commands.push(Command::CancelTimer {
                    timer_id: wait_timer.clone(),
                });
            }
        }
        Body::Wait { timer_id, fired } => {
            if !fired {
                commands.push(Command::CancelTimer {
                    timer_id: timer_id.clone(),
                });
            }
        }
        // A listen waits for nothing the shell holds: its events are in the snapshot.
        Body::Listen { .. } => {}
    }
}

/// Calls `mark` on each task under way until it returns true.
pub(super) fn find_run(frame: &mut Frame, mark: &mut dyn FnMut(&mut TaskRun) -> bool) -> bool {
    let Some(run) = frame.task.as_mut() else {
        return false;
    };
    if mark(run) {
        return true;
    }
    match &mut run.body {
        Body::Do { frame } => find_run(frame, mark),
        Body::For { frame, .. } => frame.as_mut().is_some_and(|f| find_run(f, mark)),
        Body::Try {
            phase: TryPhase::Trying { frame } | TryPhase::Recovering { frame },
            ..
        } => find_run(frame, mark),
        Body::Fork { branches } => branches.iter_mut().any(|b| match b {
            Branch::Running { frame } => find_run(frame, mark),
            _ => false,
        }),
        _ => false,
    }
}

/// Marks the leaf a timer is for; false when no task waits for it.
pub(super) fn mark_timer(root: &mut Frame, timer_id: &str) -> bool {
    find_run(root, &mut |run: &mut TaskRun| {
        if run.timeout_timer.as_deref() == Some(timer_id) && !run.timed_out {
            run.timed_out = true;
            return true;
        }
        match &mut run.body {
            Body::Wait { timer_id: t, fired } if t == timer_id && !*fired => {
                *fired = true;
                true
            }
            Body::Call {
                wait_timer,
                delivered: delivered @ None,
                ..
            } if wait_timer == timer_id => {
                *delivered = Some(Delivered::TimedOut);
                true
            }
            Body::Try {
                phase: TryPhase::Delay { timer_id: t, fired },
                ..
            } if t == timer_id && !*fired => {
                *fired = true;
                true
            }
            Body::Try {
                attempt_timer: Some(t),
                attempt_timed_out,
                ..
            } if t == timer_id && !*attempt_timed_out => {
                *attempt_timed_out = true;
                true
            }
            _ => false,
        }
    })
}

/// Marks the call a child's ending is for; false when no task waits for it.
pub(super) fn mark_call(root: &mut Frame, ended: &str, outcome: &CallOutcome) -> bool {
    find_run(root, &mut |run: &mut TaskRun| match &mut run.body {
        Body::Call {
            call_id, delivered, ..
        } if call_id == ended && delivered.is_none() => {
            *delivered = Some(match outcome {
                CallOutcome::Succeeded { output } => Delivered::Output {
                    output: output.clone(),
                },
                CallOutcome::Rejected { problem } => Delivered::Problem {
                    problem: problem.clone(),
                },
            });
            true
        }
        _ => false,
    })
}
