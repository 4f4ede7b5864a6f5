//! A call task's start: its input checked against the limits, the child's run id, and the
//! order to start it under the task's wait.

use auto_schema::json_bytes;

use super::*;

impl Engine<'_> {
    pub(super) fn start_call(
        &mut self,
        info: &TaskInfo,
        written_type: Option<&str>,
        written_name: Option<&str>,
        vars: &Vars<'_>,
    ) -> Result<Body, WorkflowError> {
        let wf = self.wf;
        let with = wf.field(info, "with").cloned().unwrap_or(Value::Null);
        let def_type = self.template(with.get("type").unwrap_or(&Value::Null), vars)?;
        let name = self.template(with.get("name").unwrap_or(&Value::Null), vars)?;
        let input = match with.get("input") {
            Some(input) => self.template(input, vars)?,
            None => json!({}),
        };
        let def_type = def_type
            .as_str()
            .filter(|t| CALLABLE_TYPES.contains(t))
            .ok_or_else(|| {
                WorkflowError::validation(format!(
                    "The call's type {def_type} is not one of reasoning, interaction, prediction, recall, computation or workflow."
                ))
            })?
            .to_owned();
        let name = match name.as_str() {
            Some(text) => match check_name(text) {
                Ok(()) => text.to_owned(),
                Err(words) => return Err(WorkflowError::validation(words)),
            },
            None => {
                return Err(WorkflowError::validation(format!(
                    "The call's name {name} is not a definition name."
                )));
            }
        };
        let bytes = json_bytes(&input).unwrap_or(usize::MAX);
        if bytes > CALL_INPUT_BYTES_MAX {
            return Err(WorkflowError::validation(format!(
                "The call's input holds {bytes} bytes as JSON; a call takes at most 262,144."
            )));
        }
        // "A task whose with.type or with.name is an expression waits as long as the longest
        // run of any function other than a workflow, plus one minute."
        let own_ms = match (written_type, written_name) {
            (Some("workflow"), Some(_)) => self.run_duration_ms,
            (Some(t), Some(n)) => self
                .functions_ms
                .get(&format!("{t}/{n}"))
                .copied()
                .unwrap_or(self.function_default_ms),
            _ => self.function_default_ms,
        };
        let due = self
            .now_ms
            .saturating_add(own_ms.saturating_add(CALL_WAIT_MARGIN_MS) as i64)
            .min(self.run_deadline_ms);
        let wait_ms = u64::try_from(due.saturating_sub(self.now_ms)).unwrap_or(0);
        let attempt = self.count("call", &info.pointer);
        let call_id = ids::call_id(&info.pointer, attempt);
        let child_run_id = ids::child_run_id(&self.info.run_id, &info.pointer, attempt);
        self.commands.push(Command::StartCall {
            call_id: call_id.clone(),
            child_run_id: child_run_id.clone(),
            def_type: def_type.clone(),
            name: name.clone(),
            input,
            wait_ms,
        });
        let wait_timer = self.set_timer("call", &info.pointer, due);
        self.event(
            "call_started",
            info,
            json!({ "call_id": call_id, "child_run_id": child_run_id, "type": def_type, "definition": name }),
        );
        Ok(Body::Call {
            call_id,
            child_run_id,
            def_type,
            name,
            wait_timer,
            delivered: None,
        })
    }
}
