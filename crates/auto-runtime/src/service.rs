//! The operations, typed: each checks its caller and its input, calls the store and returns
//! its output or a problem document. HTTP, MCP and the CLI are thin layers over these.

use std::sync::Arc;

use auto_engine::definitions::{
    CheckError, Checked, Checkers, DefinitionType, check_diagram, check_name, check_overview,
};
use auto_store::{
    DefinitionKey, DefinitionStatus, DefinitionVersion, Event, NewDefinitionVersion, NewEvent,
    NewTrigger, PlaybookRef, Store, StoreError,
};
use serde_json::{Value, json};

use crate::api::*;
use crate::auth::{Caller, Permission};
use crate::events;
use crate::problem::{Problem, ProblemIssue};

/// "`{org}` and `{pb}` are ids (`^[a-z0-9][a-z0-9-]{0,62}$`)" (supplement §2).
pub const ID_CHARS_MAX: usize = 63;
/// The most characters of an org's or a playbook's title.
pub const TITLE_CHARS_MAX: usize = 200;

/// The service: the store, the checkers, and nothing that knows HTTP.
#[derive(Clone)]
pub struct Service {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) checkers: Checkers,
    pub(crate) in_flight: crate::runs::InFlight,
    pub(crate) models: Arc<crate::reasoning_runs::Models>,
    pub(crate) cancels: crate::reasoning_runs::Cancels,
    pub(crate) scheduler: crate::workflow_runs::Scheduler,
    pub(crate) triggers: crate::triggers::Triggers,
    pub(crate) limits: crate::limits::RunLimits,
    /// The checked document of each version this server ran.
    pub(crate) documents: crate::documents::Documents,
    /// The playbooks whose recall views this server is folding.
    pub(crate) recall_follows: crate::recall_runs::Follows,
    /// What `/metrics` shows of the runs, calls and triggers this server carried out.
    pub(crate) telemetry: crate::telemetry::Telemetry,
    /// How long ended runs are kept, by playbook.
    pub(crate) retention: Arc<crate::lifecycle::Retention>,
}

/// Maps a store error to a problem: expected outcomes keep their words, faults are logged.
pub fn store_problem(error: StoreError) -> Problem {
    match error {
        StoreError::Conflict(detail) => Problem::conflict("The change conflicts", detail),
        StoreError::NotFound(detail) => Problem::not_found(detail),
        StoreError::LimitReached(detail) => Problem::conflict("Too many calls are waiting", detail),
        // A fault that may clear (a cut connection, a busy or full database): the caller may
        // try again, and a workflow's call is made again (`is_store_fault`).
        other if other.is_transient() => {
            tracing::warn!(error = %other, "a store fault");
            Problem::new(
                crate::problem::Reason::Unavailable,
                "The store is unavailable",
                "The server could not complete the change in its store; try again shortly.",
            )
            .with_kind(STORE_FAULT_KIND)
        }
        other => Problem::internal(&other),
    }
}

/// The kind of the problem a passing store fault gives.
pub const STORE_FAULT_KIND: &str = "store_unavailable";

/// Whether a problem is a passing store fault's ([`store_problem`]).
pub fn is_store_fault(problem: &Problem) -> bool {
    problem.kind.as_deref() == Some(STORE_FAULT_KIND)
}

/// The cursor of the page after a full one: the last item's key; `None` when the page was
/// not full, so no page follows.
pub(crate) fn next_cursor<T>(
    page: &[T],
    limit: usize,
    key: impl Fn(&T) -> String,
) -> Option<String> {
    (page.len() == limit)
        .then(|| page.last().map(key))
        .flatten()
}

pub fn check_id(what: &str, id: &str) -> Result<(), String> {
    let mut chars = id.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if first_ok && rest_ok && id.len() <= ID_CHARS_MAX {
        Ok(())
    } else {
        Err(format!(
            "{id:?} is not {what} id: a lowercase letter or digit, then up to 62 lowercase \
             letters, digits and hyphens."
        ))
    }
}

fn check_title(title: &Option<String>) -> Result<(), String> {
    match title {
        Some(title) if title.trim().is_empty() => Err("The title is empty.".into()),
        Some(title) if title.chars().count() > TITLE_CHARS_MAX => Err(format!(
            "The title is longer than {TITLE_CHARS_MAX} characters."
        )),
        _ => Ok(()),
    }
}

/// The checks of a body's fields that failed, each at its pointer.
fn field_issues(checks: Vec<(&str, Result<(), String>)>) -> Vec<ProblemIssue> {
    checks
        .into_iter()
        .filter_map(|(pointer, result)| result.err().map(|m| ProblemIssue::field(pointer, m)))
        .collect()
}

/// The checks of a definition's fields beside its document: its name (on create), diagram and
/// overview.
fn definition_field_checks<'a>(
    name: Option<&str>,
    diagram: &str,
    overview: Option<&str>,
) -> Vec<(&'a str, Result<(), String>)> {
    let mut checks = Vec::new();
    if let Some(name) = name {
        checks.push(("/name", check_name(name)));
    }
    checks.push(("/diagram", check_diagram(diagram)));
    if let Some(overview) = overview {
        checks.push(("/overview", check_overview(overview)));
    }
    checks
}

fn field_problems(checks: Vec<(&str, Result<(), String>)>) -> Result<(), Problem> {
    let issues = field_issues(checks);
    if issues.is_empty() {
        Ok(())
    } else {
        Err(Problem::invalid_request(issues))
    }
}

fn parse_type(text: &str) -> Result<DefinitionType, Problem> {
    text.parse::<DefinitionType>()
        .map_err(|m| Problem::invalid_request(vec![ProblemIssue::field("/type", m)]))
}

impl Service {
    pub fn new(store: Arc<dyn Store>, checkers: Checkers) -> Self {
        Self {
            store,
            checkers,
            in_flight: crate::runs::InFlight::default(),
            models: Arc::new(crate::reasoning_runs::Models::none()),
            cancels: crate::reasoning_runs::Cancels::default(),
            scheduler: crate::workflow_runs::Scheduler::default(),
            documents: Default::default(),
            triggers: crate::triggers::Triggers::default(),
            limits: crate::limits::RunLimits::default(),
            recall_follows: Default::default(),
            telemetry: crate::telemetry::Telemetry::default(),
            retention: Default::default(),
        }
    }

    /// The runtime's metric families, for the server to register.
    pub fn telemetry(&self) -> &crate::telemetry::Telemetry {
        &self.telemetry
    }

    /// The service with the deployment's limits on workflow runs.
    pub fn with_limits(mut self, limits: crate::limits::RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The service with the operator's models.
    pub fn with_models(mut self, models: crate::reasoning_runs::Models) -> Self {
        self.models = Arc::new(models);
        self
    }

    /// The store every run of this service is recorded in, for the face's health checks.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// How many work items this server found it could not read (each counted once), for
    /// `/metrics`.
    pub fn unreadable_work(&self) -> prometheus_client::metrics::counter::Counter {
        self.scheduler.unreadable.clone()
    }

    // Orgs and playbooks.

    pub async fn create_org(&self, caller: &Caller, body: CreateOrg) -> Result<OrgOut, Problem> {
        field_problems(vec![
            ("/id", check_id("an org", &body.id)),
            ("/title", check_title(&body.title)),
        ])?;
        caller.require(&body.id, Permission::Administer)?;
        let org = self
            .store
            .create_org(&body.id, body.title.as_deref())
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => Problem::conflict(
                    "The org exists",
                    format!("An org with the id {} exists already.", body.id),
                ),
                other => store_problem(other),
            })?;
        Ok(OrgOut {
            id: org.id,
            title: org.title,
            created_at: org.created_at,
        })
    }

    pub async fn list_orgs(&self, caller: &Caller) -> Result<OrgList, Problem> {
        let orgs = self.store.list_orgs().await.map_err(store_problem)?;
        let orgs = orgs
            .into_iter()
            .filter(|org| caller.org.as_ref().is_none_or(|own| own == &org.id))
            .map(|org| OrgOut {
                id: org.id,
                title: org.title,
                created_at: org.created_at,
            })
            .collect();
        Ok(OrgList { orgs })
    }

    pub async fn get_org(&self, caller: &Caller, org: &str) -> Result<OrgOut, Problem> {
        caller.require(org, Permission::Read)?;
        let found = self.store.get_org(org).await.map_err(store_problem)?;
        let org = found.ok_or_else(|| org_not_found(org))?;
        Ok(OrgOut {
            id: org.id,
            title: org.title,
            created_at: org.created_at,
        })
    }

    pub async fn create_playbook(
        &self,
        caller: &Caller,
        org: &str,
        body: CreatePlaybook,
    ) -> Result<PlaybookOut, Problem> {
        caller.require(org, Permission::Administer)?;
        self.require_org(org).await?;
        field_problems(vec![
            ("/id", check_id("a playbook", &body.id)),
            ("/title", check_title(&body.title)),
        ])?;
        let playbook = self
            .store
            .create_playbook(org, &body.id, body.title.as_deref())
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => Problem::conflict(
                    "The playbook exists",
                    format!("The org {org} has a playbook {} already.", body.id),
                ),
                other => store_problem(other),
            })?;
        Ok(playbook_out(playbook))
    }

    pub async fn list_playbooks(
        &self,
        caller: &Caller,
        org: &str,
    ) -> Result<PlaybookList, Problem> {
        caller.require(org, Permission::Read)?;
        self.require_org(org).await?;
        let playbooks = self
            .store
            .list_playbooks(org)
            .await
            .map_err(store_problem)?;
        Ok(PlaybookList {
            playbooks: playbooks.into_iter().map(playbook_out).collect(),
        })
    }

    pub async fn list_models(&self, caller: &Caller, org: &str) -> Result<ModelList, Problem> {
        caller.require(org, Permission::Read)?;
        self.require_org(org).await?;
        let providers = &self.models.providers;
        Ok(ModelList {
            models: self
                .models
                .catalog
                .offered(providers)
                .into_iter()
                .map(|m| ModelOut {
                    id: m.id,
                    provider: m.provider,
                    context_window: m.context_window,
                    max_output_tokens: m.max_output_tokens,
                    alias_of: m.alias_of,
                })
                .collect(),
            allowed: providers.allowed_patterns().map(<[String]>::to_vec),
            providers: providers
                .configured()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        })
    }

    pub async fn get_playbook(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
    ) -> Result<PlaybookOut, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await.map(playbook_out)
    }

    async fn require_org(&self, org: &str) -> Result<(), Problem> {
        match self.store.get_org(org).await.map_err(store_problem)? {
            Some(_) => Ok(()),
            None => Err(org_not_found(org)),
        }
    }

    /// The playbook, or `not_found` naming what is missing (the org or the playbook).
    pub async fn require_playbook(
        &self,
        pb: &PlaybookRef,
    ) -> Result<auto_store::Playbook, Problem> {
        if let Some(playbook) = self.store.get_playbook(pb).await.map_err(store_problem)? {
            return Ok(playbook);
        }
        self.require_org(&pb.org).await?;
        Err(Problem::not_found(format!(
            "The org {} has no playbook {}.",
            pb.org, pb.playbook
        )))
    }

    /// Who the caller is and what it may do, for a client that shows only what it may.
    pub fn get_caller(&self, caller: &Caller) -> CallerOut {
        CallerOut {
            caller: caller.id.clone(),
            role: caller.role.as_str().into(),
            org: caller.org.clone(),
        }
    }

    // Definitions.

    pub async fn create_definition(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        body: CreateDefinition,
    ) -> Result<DefinitionOut, Problem> {
        caller.require(&pb.org, Permission::Define)?;
        self.require_playbook(pb).await?;
        let def_type = parse_type(&body.def_type)?;
        field_problems(definition_field_checks(
            Some(&body.name),
            &body.diagram,
            body.overview.as_deref(),
        ))?;
        let checked = self.check_source(def_type, &body.name, &body.source)?;
        let key = DefinitionKey::new(def_type.as_str(), &body.name);
        if let Some(existing) = self
            .store
            .get_definition(pb, &key)
            .await
            .map_err(store_problem)?
        {
            return Err(exists_problem(def_type, &existing));
        }
        let event_id = crate::runs::new_event_id();
        let new = new_version(
            key,
            &body.source,
            body.overview,
            body.diagram,
            &checked,
            &event_id,
        );
        let event = definition_event(
            &event_id,
            "definition_created",
            caller,
            def_type,
            &body.name,
            1,
        );
        let (saved, _) =
            self.store
                .create_definition(pb, new, event)
                .await
                .map_err(|e| match e {
                    StoreError::Conflict(_) => Problem::conflict(
                        "The definition exists",
                        format!("The {} {} exists already.", def_type.noun(), body.name),
                    ),
                    other => triggers_limit(other),
                })?;
        self.triggers.wake();
        self.after_save(pb, def_type, &body.name);
        self.definition_out(pb, saved, true).await
    }

    /// What a saved version sets going: a recall function's view is built from the log.
    fn after_save(&self, pb: &PlaybookRef, def_type: DefinitionType, name: &str) {
        if def_type == DefinitionType::Recall {
            crate::recall_runs::saved(self, pb, name);
        }
    }

    pub async fn update_definition(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
        body: UpdateDefinition,
    ) -> Result<DefinitionOut, Problem> {
        caller.require(&pb.org, Permission::Define)?;
        self.require_playbook(pb).await?;
        let (def_type, current) = self.find_definition(pb, type_text, name).await?;
        if current.status == DefinitionStatus::Retired {
            return Err(retired_problem(def_type, name, "updated"));
        }
        field_problems(definition_field_checks(
            None,
            &body.diagram,
            body.overview.as_deref(),
        ))?;
        let checked = self.check_source(def_type, name, &body.source)?;
        let unchanged = current.source == body.source
            && current.diagram == body.diagram
            && body
                .overview
                .as_ref()
                .is_none_or(|o| current.overview.as_ref() == Some(o));
        if unchanged {
            return self.definition_out(pb, current, true).await;
        }
        let event_id = crate::runs::new_event_id();
        let version = current.version + 1;
        let new = new_version(
            current.key.clone(),
            &body.source,
            body.overview,
            body.diagram,
            &checked,
            &event_id,
        );
        let event = definition_event(
            &event_id,
            "definition_updated",
            caller,
            def_type,
            name,
            version,
        );
        let (saved, _) = self
            .store
            .update_definition(pb, current.version, new, event)
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => Problem::conflict(
                    "The definition changed",
                    format!(
                        "The {} {name} changed while this update was checked: read it again \
                         and update the latest version.",
                        def_type.noun()
                    ),
                ),
                other => triggers_limit(other),
            })?;
        self.triggers.wake();
        self.after_save(pb, def_type, name);
        self.definition_out(pb, saved, true).await
    }

    pub async fn get_definition(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
    ) -> Result<DefinitionOut, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let (_, current) = self.find_definition(pb, type_text, name).await?;
        self.definition_out(pb, current, true).await
    }

    pub async fn list_definitions(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: Option<&str>,
    ) -> Result<DefinitionList, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let def_type = match type_text {
            Some(text) => Some(text.parse::<DefinitionType>().map_err(|m| {
                Problem::invalid_request(vec![ProblemIssue::field("/query/type", m)])
            })?),
            None => None,
        };
        let all = self
            .store
            .list_definitions(pb, None)
            .await
            .map_err(store_problem)?;
        let definitions = all
            .iter()
            .filter(|d| def_type.is_none_or(|t| d.key.def_type == t.as_str()))
            .map(|d| to_out(d.clone(), used_by(&all, &d.key), false))
            .collect();
        Ok(DefinitionList { definitions })
    }

    pub async fn retire_definition(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
    ) -> Result<DefinitionOut, Problem> {
        caller.require(&pb.org, Permission::Define)?;
        self.require_playbook(pb).await?;
        let (def_type, current) = self.find_definition(pb, type_text, name).await?;
        if current.status == DefinitionStatus::Retired {
            return Err(retired_problem(def_type, name, "retired again"));
        }
        let event_id = crate::runs::new_event_id();
        let event = definition_event(
            &event_id,
            "definition_retired",
            caller,
            def_type,
            name,
            current.version,
        );
        let (saved, _) = self
            .store
            .retire_definition(pb, &current.key, event)
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => retired_problem(def_type, name, "retired again"),
                other => store_problem(other),
            })?;
        self.definition_out(pb, saved, true).await
    }

    /// What a save of `body` would say, saving nothing: the issues a create would refuse it
    /// with (the fields' and the document's, by line), or the warnings, schemas and generated
    /// overview it would be saved with. The Studio's editor calls it as a person types.
    pub async fn check_definition(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        body: CreateDefinition,
    ) -> Result<DefinitionCheck, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let mut issues = field_issues(definition_field_checks(
            Some(&body.name),
            &body.diagram,
            body.overview.as_deref(),
        ));
        let checked = match parse_type(&body.def_type)
            .and_then(|def_type| self.check_source(def_type, &body.name, &body.source))
        {
            Ok(checked) => checked,
            Err(problem) => {
                issues.extend(problem.issues);
                Checked::default()
            }
        };
        Ok(DefinitionCheck {
            valid: issues.is_empty(),
            issues,
            warnings: checked.warnings,
            input_schema: checked.input_schema,
            output_schema: checked.output_schema,
            overview: checked.generated_overview,
        })
    }

    /// Every saved version of a definition, oldest first, each with its overview.
    pub async fn list_definition_versions(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
    ) -> Result<DefinitionVersions, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let (_, current) = self.find_definition(pb, type_text, name).await?;
        let all = self
            .store
            .list_definitions(pb, None)
            .await
            .map_err(store_problem)?;
        let users = used_by(&all, &current.key);
        let mut versions = Vec::with_capacity(current.version as usize);
        for number in 1..current.version {
            let version = self
                .store
                .get_definition_version(pb, &current.key, number)
                .await
                .map_err(store_problem)?;
            // Versions are never deleted; one missing would be the store's fault, not the
            // caller's, and the listing shows the rest.
            if let Some(version) = version {
                versions.push(to_out(version, users.clone(), true));
            }
        }
        versions.push(to_out(current, users, true));
        Ok(DefinitionVersions { versions })
    }

    /// One saved version of a definition, as `get_definition` shows the latest.
    pub async fn get_definition_version(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
        version: i64,
    ) -> Result<DefinitionOut, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let (def_type, current) = self.find_definition(pb, type_text, name).await?;
        let found = self
            .store
            .get_definition_version(pb, &current.key, version)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| {
                Problem::not_found(format!(
                    "The {} {name} has no version {version}: its versions are 1 to {}.",
                    def_type.noun(),
                    current.version
                ))
            })?;
        self.definition_out(pb, found, true).await
    }

    /// Checks a source with its type's checker, as `auto check` does.
    pub fn check_source(
        &self,
        def_type: DefinitionType,
        name: &str,
        source: &str,
    ) -> Result<Checked, Problem> {
        self.checkers
            .check(def_type, source)
            .map_err(|error| match error {
                CheckError::NotSupported(t) => Problem::invalid_request(vec![ProblemIssue::field(
                    "/type",
                    format!(
                        "A {} cannot be saved yet: this runtime has no checker for the type {t}.",
                        t.noun()
                    ),
                )]),
                CheckError::Issues(issues) => {
                    let issues: Vec<ProblemIssue> = issues
                        .iter()
                        .map(|i| ProblemIssue::in_document("/source", i))
                        .collect();
                    let detail = issues
                        .iter()
                        .map(|i| i.message.as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    Problem::invalid_input(
                        format!(
                            "The {} {name} was not saved: its document has problems",
                            def_type.noun()
                        ),
                        detail,
                    )
                    .with_issues(issues)
                }
            })
    }

    async fn find_definition(
        &self,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
    ) -> Result<(DefinitionType, DefinitionVersion), Problem> {
        let not_found = || {
            Problem::not_found(format!(
                "The playbook {} has no {type_text} definition {name}.",
                pb.playbook
            ))
        };
        let def_type = type_text
            .parse::<DefinitionType>()
            .map_err(|_| not_found())?;
        let key = DefinitionKey::new(def_type.as_str(), name);
        let found = self
            .store
            .get_definition(pb, &key)
            .await
            .map_err(store_problem)?;
        found.map(|d| (def_type, d)).ok_or_else(not_found)
    }

    async fn definition_out(
        &self,
        pb: &PlaybookRef,
        version: DefinitionVersion,
        with_overview: bool,
    ) -> Result<DefinitionOut, Problem> {
        let all = self
            .store
            .list_definitions(pb, None)
            .await
            .map_err(store_problem)?;
        let users = used_by(&all, &version.key);
        Ok(to_out(version, users, with_overview))
    }

    // Events.

    pub async fn publish_event(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        body: EventIn,
    ) -> Result<EventOut, Problem> {
        caller.require(&pb.org, Permission::Run)?;
        self.require_playbook(pb).await?;
        let new = events::published(caller, body.0)?;
        let id = new.id.clone();
        let mut appended = self
            .store
            .append_events(pb, vec![new])
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => Problem::conflict(
                    "The event id is taken",
                    format!("The playbook has an event with the id {id} already."),
                ),
                other => store_problem(other),
            })?;
        let event = appended
            .pop()
            .ok_or_else(|| Problem::internal(&"append returned no event"))?;
        self.triggers.wake();
        Ok(events::event_out(&event, true))
    }

    pub async fn list_playbook_events(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        query: events::EventQuery,
    ) -> Result<EventList, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let filter = query.into_filter()?;
        let limit = filter.limit as usize;
        let found = self
            .store
            .list_events(pb, &filter)
            .await
            .map_err(store_problem)?;
        let next = next_cursor(&found, limit, |e| e.seq.to_string());
        let events = found.iter().map(|e| events::event_out(e, false)).collect();
        Ok(EventList { events, next })
    }

    /// A reader of the playbook's log from the query's cursor on, for the events stream: the
    /// caller's right to read is checked once, here. `after` may also be [`LOG_END`]: only
    /// the events recorded from now on.
    pub async fn open_event_follower(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        mut query: events::EventQuery,
    ) -> Result<EventFollower, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        if query.after.as_deref() == Some(LOG_END) {
            let end = self.store.log_end(pb).await.map_err(store_problem)?;
            query.after = Some(end.to_string());
        }
        let filter = query.into_filter()?;
        Ok(EventFollower {
            store: self.store.clone(),
            pb: pb.clone(),
            filter,
        })
    }

    pub async fn get_event(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        id: &str,
    ) -> Result<EventOut, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let found: Option<Event> = self.store.get_event(pb, id).await.map_err(store_problem)?;
        let event = found.ok_or_else(|| {
            Problem::not_found(format!("The playbook {} has no event {id}.", pb.playbook))
        })?;
        Ok(events::event_out(&event, true))
    }
}

fn org_not_found(org: &str) -> Problem {
    Problem::not_found(format!("There is no org {org}."))
}

fn playbook_out(playbook: auto_store::Playbook) -> PlaybookOut {
    PlaybookOut {
        org: playbook.org,
        id: playbook.id,
        title: playbook.title,
        created_at: playbook.created_at,
    }
}

fn exists_problem(def_type: DefinitionType, existing: &DefinitionVersion) -> Problem {
    let state = match existing.status {
        DefinitionStatus::Active => "exists already; update it instead",
        DefinitionStatus::Retired => "was retired; its name cannot be used again",
    };
    Problem::conflict(
        "The definition exists",
        format!("The {} {} {state}.", def_type.noun(), existing.key.name),
    )
}

fn retired_problem(def_type: DefinitionType, name: &str, what: &str) -> Problem {
    Problem::conflict(
        "The definition is retired",
        format!(
            "The {} {name} is retired and cannot be {what}.",
            def_type.noun()
        ),
    )
}

fn new_version(
    key: DefinitionKey,
    source: &str,
    overview: Option<String>,
    diagram: String,
    checked: &Checked,
    event_id: &str,
) -> NewDefinitionVersion {
    let overview = checked.generated_overview.clone().or(overview);
    NewDefinitionVersion {
        key,
        source: source.into(),
        overview,
        diagram,
        description: checked.description.clone(),
        derived: json!({ "checked": checked, "saved_event": event_id }),
        triggers: checked
            .triggers
            .iter()
            .map(|trigger| NewTrigger {
                kind: trigger["kind"].as_str().unwrap_or_default().to_owned(),
                spec: trigger.clone(),
            })
            .collect(),
    }
}

fn definition_event(
    id: &str,
    event_type: &str,
    caller: &Caller,
    def_type: DefinitionType,
    name: &str,
    version: i64,
) -> NewEvent {
    let mut event = NewEvent::new(id, event_type, format!("/definitions/{def_type}/{name}"));
    event.subject = Some(format!("{def_type}/{name}"));
    event.data = Some(json!({ "type": def_type.as_str(), "name": name, "version": version }));
    event
        .extensions
        .insert("caller".into(), Value::String(caller.id.clone()));
    event
        .extensions
        .insert("definitionversion".into(), json!(version));
    // A save comes from outside any chain of triggers: "An event published from outside has
    // depth 1."
    event.extensions.insert("depth".into(), json!(1));
    event
}

/// The problem of a save past "Workflows with triggers: 1,024 a playbook".
fn triggers_limit(error: StoreError) -> Problem {
    match error {
        StoreError::LimitReached(detail) => {
            Problem::conflict("The playbook has too many workflows with triggers", detail)
                .with_kind("limit_reached")
        }
        other => store_problem(other),
    }
}

fn checked_of(version: &DefinitionVersion) -> Checked {
    version
        .derived
        .get("checked")
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default()
}

fn used_by(all: &[DefinitionVersion], key: &DefinitionKey) -> Vec<String> {
    let target = format!("{}/{}", key.def_type, key.name);
    all.iter()
        .filter(|d| d.status == DefinitionStatus::Active && checked_of(d).uses.contains(&target))
        .map(|d| format!("{}/{}", d.key.def_type, d.key.name))
        .collect()
}

fn to_out(version: DefinitionVersion, used_by: Vec<String>, with_overview: bool) -> DefinitionOut {
    let checked = checked_of(&version);
    let is_workflow = version.key.def_type == "workflow";
    let active = version.status == DefinitionStatus::Active;
    let triggers_since = (active && !checked.triggers.is_empty())
        .then(|| {
            version
                .derived
                .get("saved_event")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .flatten();
    DefinitionOut {
        def_type: version.key.def_type,
        name: version.key.name,
        version: version.version,
        status: version.status.as_str().into(),
        description: version.description,
        source: version.source,
        // A workflow's overview is generated, and its "Used by" changes without a save, so it
        // is written when the definition is read; other types keep what the caller wrote.
        overview: if with_overview {
            match (is_workflow, version.overview) {
                (true, Some(overview)) => {
                    Some(match auto_engine::workflow::used_by_section(&used_by) {
                        Some(section) => format!("{}\n{section}", overview.trim_end()),
                        None => overview,
                    })
                }
                (_, overview) => overview,
            }
        } else {
            None
        },
        diagram: version.diagram,
        warnings: checked.warnings,
        input_schema: checked.input_schema,
        output_schema: checked.output_schema,
        triggers: checked.triggers,
        triggers_since,
        used_by,
        created_at: version.created_at,
        updated_at: version.updated_at,
    }
}

/// The cursor of the events stream that starts at the end of the log: only what is recorded
/// after the stream opens.
pub const LOG_END: &str = "end";

/// Reads a playbook's log page by page from a cursor, as a follower does: every `seq` it shows
/// is greater than the one before, and none visible is skipped (the store's promise).
pub struct EventFollower {
    store: Arc<dyn Store>,
    pb: PlaybookRef,
    filter: auto_store::EventFilter,
}

impl EventFollower {
    /// The events after the cursor (at most a page, each with its `seq`), moving the cursor
    /// past them; empty when there is nothing new yet.
    pub async fn next_page(&mut self) -> Result<Vec<(i64, EventOut)>, Problem> {
        let found = self
            .store
            .list_events(&self.pb, &self.filter)
            .await
            .map_err(store_problem)?;
        if let Some(last) = found.last() {
            self.filter.after_seq = Some(last.seq);
        }
        Ok(found
            .iter()
            .map(|e| (e.seq, events::event_out(e, false)))
            .collect())
    }
}
