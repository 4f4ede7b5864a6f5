//! The checked document of each saved version. A version never changes once saved, so a server
//! checks its source once and keeps what the check gave, by playbook, definition and version,
//! rather than checking it again at every run, call, answer and resume.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use auto_engine::computation::{ComputationDocument, check_computation};
use auto_engine::definitions::DefinitionType;
use auto_engine::interaction::InteractionDocument;
use auto_engine::prediction::{PredictionDocument, check_prediction};
use auto_engine::reasoning::{ReasoningDocument, check_reasoning};
use auto_engine::recall::{RecallDocument, check_recall};
use auto_engine::workflow::WorkflowLimits;
use auto_engine::workflow::engine::Workflow;
use auto_store::{DefinitionKey, PlaybookRef};

use crate::problem::Problem;
use crate::service::{Service, store_problem};

/// How many checked documents a server keeps; past it, it starts again.
pub const DOCUMENTS_MAX: usize = 1_024;

/// A version's document as its type's checks gave it.
#[derive(Debug)]
pub enum Checked {
    Reasoning(ReasoningDocument),
    /// Shared, as a run hands it to the blocking task that runs the program.
    Computation(Arc<ComputationDocument>),
    Interaction(InteractionDocument),
    Workflow(Arc<Workflow>),
    /// Shared, as folds and answers run on blocking tasks.
    Recall(Arc<RecallDocument>),
    Prediction(Arc<PredictionDocument>),
}

impl Checked {
    pub fn reasoning(&self) -> Option<&ReasoningDocument> {
        match self {
            Self::Reasoning(document) => Some(document),
            _ => None,
        }
    }

    pub fn computation(&self) -> Option<&Arc<ComputationDocument>> {
        match self {
            Self::Computation(document) => Some(document),
            _ => None,
        }
    }

    pub fn interaction(&self) -> Option<&InteractionDocument> {
        match self {
            Self::Interaction(document) => Some(document),
            _ => None,
        }
    }

    pub fn recall(&self) -> Option<&Arc<RecallDocument>> {
        match self {
            Self::Recall(document) => Some(document),
            _ => None,
        }
    }

    pub fn prediction(&self) -> Option<&Arc<PredictionDocument>> {
        match self {
            Self::Prediction(document) => Some(document),
            _ => None,
        }
    }

    pub fn workflow(&self) -> Option<&Arc<Workflow>> {
        match self {
            Self::Workflow(workflow) => Some(workflow),
            _ => None,
        }
    }
}

type Slot = (PlaybookRef, DefinitionKey, i64);

/// The refusal of a run of a version whose source no longer passes this runtime's checks.
pub fn no_longer_parses(key: &DefinitionKey) -> Problem {
    Problem::conflict(
        format!("The {} {} no longer parses", key.def_type, key.name),
        "Its document no longer passes the checks of this runtime; save a new version.",
    )
}

/// The checked documents this server keeps.
#[derive(Clone, Debug, Default)]
pub struct Documents {
    kept: Arc<Mutex<HashMap<Slot, Arc<Checked>>>>,
}

impl Documents {
    fn get(&self, slot: &Slot) -> Option<Arc<Checked>> {
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(slot)
            .cloned()
    }

    /// Forgets the documents of the playbooks `gone` says were deleted: an id created again
    /// starts with versions of its own.
    pub(crate) fn forget(&self, gone: impl Fn(&PlaybookRef) -> bool) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(pb, _, _), _| !gone(pb));
    }

    fn keep(&self, slot: Slot, checked: Arc<Checked>) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= DOCUMENTS_MAX {
            kept.clear();
        }
        kept.insert(slot, checked);
    }
}

impl Service {
    /// The checked document of version `version` of `key`, whose source is `source`; `None`
    /// when the source no longer passes this runtime's checks (a version saved by an earlier
    /// release), which a run of it is refused for.
    pub fn checked(
        &self,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
        source: &str,
    ) -> Option<Arc<Checked>> {
        let slot = (pb.clone(), key.clone(), version);
        if let Some(found) = self.documents.get(&slot) {
            return Some(found);
        }
        let checked = Arc::new(self.check_saved(&key.def_type, source)?);
        self.documents.keep(slot, checked.clone());
        Some(checked)
    }

    /// [`Self::checked`] of a version read from the store when it is not kept already.
    pub async fn checked_version(
        &self,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
    ) -> Result<Option<Arc<Checked>>, Problem> {
        if let Some(found) = self.documents.get(&(pb.clone(), key.clone(), version)) {
            return Ok(Some(found));
        }
        let saved = self
            .store
            .get_definition_version(pb, key, version)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| Problem::internal(&"a run's definition version is missing"))?;
        Ok(self.checked(pb, key, version, &saved.source))
    }

    /// A saved source read again by its type's checks, as a run reads it: a workflow under
    /// the deployment's longest run, an interaction under the widest limit a deployment may
    /// set, so a document a save accepted is accepted here.
    fn check_saved(&self, def_type: &str, source: &str) -> Option<Checked> {
        Some(match def_type.parse::<DefinitionType>().ok()? {
            DefinitionType::Reasoning => Checked::Reasoning(check_reasoning(source).ok()?),
            DefinitionType::Computation => {
                Checked::Computation(Arc::new(check_computation(source).ok()?))
            }
            DefinitionType::Interaction => {
                Checked::Interaction(crate::interaction_runs::saved_interaction(source)?)
            }
            DefinitionType::Workflow => {
                let limits = WorkflowLimits {
                    run_duration_ms: self.limits.workflow_max_duration_ms,
                    deadline: None,
                };
                Checked::Workflow(Arc::new(Workflow::from_source_with(source, &limits).ok()?))
            }
            DefinitionType::Recall => Checked::Recall(Arc::new(check_recall(source).ok()?)),
            DefinitionType::Prediction => {
                // Read under the widest limit a deployment may set, as an interaction's.
                Checked::Prediction(Arc::new(
                    check_prediction(source, auto_engine::workflow::RUN_DURATION_MS_MAX).ok()?,
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &str = "---\nmodel: anthropic/claude-sonnet-4-5\n---\nSay {{ input.q }}.\n";

    async fn service() -> Service {
        let store = auto_store::open("sqlite::memory:").await.expect("a store");
        Service::new(store, crate::server_checkers())
    }

    #[tokio::test]
    async fn a_version_is_checked_once_and_kept_by_playbook_definition_and_version() {
        let service = service().await;
        let pb = PlaybookRef::new("acme", "main");
        let key = DefinitionKey::new("reasoning", "say");
        let first = service.checked(&pb, &key, 1, PLAIN).expect("checked");
        assert!(first.reasoning().is_some() && first.workflow().is_none());
        // Kept: the same version is not checked again, whatever source is offered with it.
        let again = service
            .checked(&pb, &key, 1, "not a document")
            .expect("kept");
        assert!(Arc::ptr_eq(&first, &again));
        // Another version, or the same in another playbook, is checked on its own.
        assert!(service.checked(&pb, &key, 2, "not a document").is_none());
        let other = PlaybookRef::new("acme", "other");
        assert!(!Arc::ptr_eq(
            &first,
            &service.checked(&other, &key, 1, PLAIN).expect("checked")
        ));
        // A type that does not run here has no checked document.
        let prediction = DefinitionKey::new("prediction", "say");
        assert!(service.checked(&pb, &prediction, 1, PLAIN).is_none());
    }

    #[tokio::test]
    async fn a_server_keeps_at_most_documents_max() {
        let service = service().await;
        let pb = PlaybookRef::new("acme", "main");
        let key = DefinitionKey::new("reasoning", "say");
        for version in 0..=DOCUMENTS_MAX as i64 {
            service.checked(&pb, &key, version, PLAIN).expect("checked");
        }
        let kept = service.documents.kept.lock().unwrap().len();
        assert!(kept <= DOCUMENTS_MAX, "{kept}");
    }
}
