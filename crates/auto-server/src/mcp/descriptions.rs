//! The tools' descriptions, written for a model that has never seen the runtime: what the
//! operation does, what it needs, what it returns, and which rejections to expect.
//!
//! Keyed by the operation's name in `openapi::OPERATIONS`, which stays the one table of
//! operations; an operation without an entry here is still a tool, described by its summary.

use crate::openapi::Operation;

/// `(operation name, description)`.
const DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "delete_org",
        "Delete an org and all its playbooks (admins). Refused while runs go on, unless force.",
    ),
    (
        "delete_playbook",
        "Delete a playbook and all it holds (admins). Refused while runs go on, unless force.",
    ),
    (
        "purge_runs",
        "Remove runs that ended before ended_before, with their events (admins); runs still \
         needed stay. Purged seqs stay holes.",
    ),
    (
        "check_definition",
        "Check a definition as create_definition would, and save nothing. Takes the same \
         arguments (type, name, source, overview, diagram). Returns valid, issues[] (each \
         with pointer, line and message, exactly as a save would be refused with), warnings, \
         input_schema and output_schema, and for a workflow its generated overview. Check a \
         document while writing it; save it with create_definition or update_definition once \
         valid is true.",
    ),
    (
        "search",
        "List the tool servers the operator set up for the playbook, each with the tools it \
         allows (name, model_name, description, read_only); a server that cannot list its tools \
         now carries failure. Pass a few words describing what the function should do as terms \
         to rank the tools. Do not guess tool names for a reasoning function's tools: search, \
         then write each as server/tool.",
    ),
    (
        "introspect",
        "Read one tool in full: its description, whether it is read-only, the schema of its \
         arguments and the parts of that schema some providers ignore. Needs server and tool \
         as search showed them. Expect not_found for a server not set up for the playbook or a \
         tool it does not allow or list.",
    ),
    (
        "execute",
        "Call one tool once, as a run would, and return what the run's model would see \
         (content, is_error); the call is recorded in the playbook's history. With dry_run: \
         true, report the checks the call would pass (configured, allowed, listed, at most 16 \
         KiB of arguments) and call nothing. Needs server, tool and arguments (a JSON object). \
         A tool that is not read-only may change something outside the playbook.",
    ),
    (
        "dry_run",
        "Check a call of one tool without making it: whether the server is set up for the \
         playbook, the tool allowed and listed, and the arguments at most 16 KiB; nothing is \
         called and nothing outside the playbook changes. Needs server, tool and arguments (a \
         JSON object), as execute does. Returns what execute would check. Expect not_found for \
         a server not set up for the playbook or a tool it does not allow or list.",
    ),
    (
        "create_org",
        "Create an org: the top-level tenant that holds playbooks and whose keys reach only it. \
         Needs id (lowercase letters, digits and hyphens, starting with a letter or digit, at \
         most 63 characters) and optionally a title. Returns the org. Expect conflict when the \
         id is taken and forbidden unless the caller is an admin.",
    ),
    (
        "list_orgs",
        "List the orgs the caller can reach (a key reaches its own org only). Needs nothing. \
         Returns {orgs: [{id, title, created_at}]}.",
    ),
    (
        "get_org",
        "Read one org by its id. Returns {id, title, created_at}. Expect not_found for an \
         unknown org.",
    ),
    (
        "create_playbook",
        "Create a playbook in an org. A playbook is one business process's set of definitions \
         (reasoning functions, workflows, interactions, computations...) and its event log. \
         Needs org, id (same rules as an org's id) and optionally a title. Returns the \
         playbook. Expect conflict when the id is taken in the org, not_found for an unknown \
         org, forbidden unless the caller is an admin of the org.",
    ),
    (
        "list_playbooks",
        "List an org's playbooks. Needs org. Returns {playbooks: [{org, id, title, \
         created_at}]}.",
    ),
    (
        "list_models",
        "List the models a reasoning function may name in its model field: each model of a \
         configured provider that the operator allows, from the runtime's model catalog, with \
         its context_window and max_output_tokens, and each alias with the model it resolves \
         to. Needs org. Returns {models: [{id, provider, context_window, max_output_tokens, \
         alias_of?}], allowed, providers}. allowed lists the operator's patterns (null: every \
         model of a configured provider); a pattern such as my-gateway/* also admits models \
         the catalog does not list. Saving a definition never checks its model; a run does.",
    ),
    (
        "get_playbook",
        "Read one playbook. Returns {org, id, title, created_at}. Expect not_found for an \
         unknown org or playbook.",
    ),
    (
        "create_definition",
        "Check a new definition's document and save it as version 1. A definition is a typed \
         document of the playbook: reasoning (a model call), workflow, interaction (asks a \
         person), computation, recall or prediction. Needs type, name (lowercase, starting \
         with a letter, at most 64 characters), source (the document: Markdown with YAML front \
         matter, or a workflow's YAML), diagram (required every time: Mermaid whose first line \
         starts with flowchart, graph or stateDiagram, at most 8,192 bytes, or the word none) \
         and optionally overview (Markdown for the person who runs the business). Returns the \
         definition with its version, warnings, input and output schemas and triggers. Expect \
         invalid_input with issues at /source (line, column and path inside the document, in \
         the checker's words) or at the field, and conflict when a definition of that type and \
         name exists (use update_definition).",
    ),
    (
        "list_definitions",
        "List the playbook's definitions, latest version of each, without their overviews. \
         Optionally type to list one type only. Returns {definitions: [...]}.",
    ),
    (
        "get_definition",
        "Read a definition's latest version in full, with its overview, source, diagram, \
         warnings, input and output schemas, triggers and the definitions that use it. Needs \
         type and name. Expect not_found for an unknown definition.",
    ),
    (
        "update_definition",
        "Check a changed document and save it as the definition's next version; an update that \
         changes nothing makes no new version. Needs type and name (of an existing \
         definition), source and diagram (required every time, as for create_definition), and \
         optionally overview (left out: the one saved before is kept). Returns the definition. \
         Expect invalid_input with issues at /source, not_found for an unknown definition, and \
         conflict for a retired one.",
    ),
    (
        "retire_definition",
        "Retire a definition: it runs no more and takes no updates; its versions and history \
         stay. It cannot be undone. Needs type and name. Returns the definition with status \
         retired. Expect not_found, and conflict when it is retired already.",
    ),
    (
        "run_definition",
        "Run the latest active version of a definition with an input, and wait for its end. \
         Needs type and name; input (a JSON object, checked against the definition's \
         input_schema; {} when left out) and run_id (1 to 128 of letters, digits and . _ : -; \
         a new id is made when left out). A reasoning function renders its prompt, calls its \
         model and checks the answer; a computation function runs its program; an interaction \
         function leaves a request for a person in the inbox and returns the run with status \
         started (see list_requests and answer_interaction; get_run shows its end); a workflow \
         returns the run with status started as soon as it waits for a timer, an event or a \
         call of another function, and goes on: read it with get_run until its status \
         changes. Otherwise returns the \
         run {run_id, status: succeeded, output, record}; record holds the model, settings, \
         usage, duration_ms and prompt of a reasoning run. Retrying with the same run_id and \
         input returns the recorded success or invalid_input without calling the model again; \
         after unavailable or conflict it runs again. Expect invalid_input (issues under \
         /input; a template that reads a missing field names it and its line), unavailable \
         (the provider cannot serve now, rate limits with retry_after_seconds, an answer that \
         does not match the output schema: try again; kind model_not_offered: see \
         list_models), conflict (kind unworkable: change the definition, such as raising \
         config.max_output_tokens; kind taken: the run is still going, ask again later) and \
         cancelled.",
    ),
    (
        "get_run",
        "Read a run by its run_id: {run_id, type, name, definition_version, status (started, \
         succeeded, rejected, failed), input, output, record, problem, started_by, started_at, \
         ended_at}. A rejected run shows its problem document under problem, and the usage of \
         the model calls it made under record. list_playbook_events with run_id gives the \
         run's history, one event per model call started and ended.",
    ),
    (
        "list_runs",
        "List the playbook's runs, newest first, without input and output. Filters: type, \
         name, status (started, succeeded, rejected, failed), reason (the problem's: \
         invalid_input, forbidden, not_found, conflict, unavailable, cancelled, unanswered, \
         failed), since and until (RFC 3339 times bounding the start, since inclusive), limit \
         (1 to 1,000, 50 by default) and after (the run_id where the previous page ended, from \
         next). Returns {runs: [...], next}.",
    ),
    (
        "cancel_run",
        "Cancel a run that is still started, with an optional detail in your words. A \
         reasoning run going on in this server ends at once as cancelled, keeping the usage of \
         its model calls; one going on in another server stops before its next model call; \
         one whose server stopped ends now. Returns the run. Expect conflict when the run has \
         ended, or when its type finishes within its call (computation). An interaction run \
         whose request waits ends cancelled, and its request too.",
    ),
    (
        "list_requests",
        "List the playbook's inbox: each request that a run of an interaction function left \
         for a person to answer, newest first. Optionally status (open: waiting for an answer; \
         answered, expired, undelivered or cancelled: closed), limit (1 to 1,000, 50 by \
         default) and after (the next of the page before). Returns {requests: [{request_id, \
         run_id, definition: {type, name, version}, to (who is asked), message (the request \
         in Markdown), input, output_schema (the JSON Schema an answer must match, or null), \
         status, created_at, expires_at, answered_by?, answer?}], next}. Answer an open one \
         with answer_interaction.",
    ),
    (
        "answer_interaction",
        "Answer an open request of the inbox on behalf of the caller. Needs request_id (from \
         list_requests) and answer: a JSON value that matches the request's output_schema, \
         such as {\"verdict\": \"approve\"}. The request's run then ends succeeded with the \
         answer as its output, and a workflow waiting for that run goes on with it. Returns the \
         request with status answered, answered_by and answer. Expect invalid_input when the \
         answer does not match (issues under /answer name each field; the request stays open, \
         so answer again), conflict when the request was already answered, expired or was \
         cancelled (detail says which), not_found for an unknown request_id, and forbidden \
         unless the key may run (runner, editor or admin).",
    ),
    (
        "send_run_event",
        "Send an event to one workflow run that has not ended, for its listen tasks: the run \
         keeps it until a listen task whose filter matches takes it, earliest first. Needs \
         run_id and the event as CloudEvents 1.0 attributes: type is required; id (a new one \
         when left out; give one so a retry is not taken twice), source (/callers/<caller> \
         when left out), subject, time, datacontenttype, data (any JSON) and extension \
         attributes are optional. Returns {run_id, id, duplicate}: duplicate is true when the \
         run had received that id, and this event was ignored. Expect invalid_input for a \
         malformed attribute, and not_found for an unknown run, a run that has ended (also once \
         it ended for taking more events than a run takes) or a run that is not a workflow's.",
    ),
    (
        "publish_event",
        "Publish an event to the playbook's event log, where workflows with a matching trigger \
         start from it. The arguments are the event as CloudEvents 1.0 attributes: type is \
         required (such as com.acme.order.created); id (a new one when left out), source \
         (/callers/<caller> when left out), subject, time, datacontenttype, data (any JSON) and \
         extension attributes are optional. Returns the recorded event with its seq. Expect \
         invalid_input for a malformed attribute and conflict when the playbook has an event \
         with that id already.",
    ),
    (
        "list_playbook_events",
        "List the playbook's events in the order they were recorded, a page at a time. \
         Optionally run_id (one run's events), type, limit (1 to 1,000, 100 by default) and \
         after (the next of the page before). Returns {events: [...], next}: next is null on \
         the last page. An event's data larger than 2 KiB is left out and data_bytes given \
         instead: read it with get_event.",
    ),
    (
        "get_event",
        "Read one event in full, with its data. Needs event_id. Expect not_found for an \
         unknown event.",
    ),
];

/// What a tool is called beside other servers' tools: `(operation name, title)`. A client shows
/// the title where it shows the tool, and several clients namespace a tool's name with the
/// server's (`auto__run_definition`, `mcp__auto__run_definition`), so the title is the part
/// that reads as words. The names stay the operations' (supplement §3).
const TITLES: &[(&str, &str)] = &[
    ("get_caller", "who this key is"),
    ("create_org", "create an org"),
    ("list_orgs", "list the orgs"),
    ("get_org", "read an org"),
    ("create_playbook", "create a playbook"),
    ("list_playbooks", "list an org's playbooks"),
    ("list_models", "list the models a function may name"),
    ("get_playbook", "read a playbook"),
    ("create_definition", "save a new definition"),
    ("list_definitions", "list the definitions"),
    ("get_definition", "read a definition"),
    ("list_definition_versions", "list a definition's versions"),
    ("check_definition", "check a definition without saving it"),
    ("update_definition", "save a definition's next version"),
    ("retire_definition", "retire a definition"),
    ("run_definition", "run a definition"),
    ("get_run", "read a run"),
    ("list_runs", "list the runs"),
    ("cancel_run", "cancel a run"),
    ("send_run_event", "send an event to a workflow run"),
    ("list_requests", "list the inbox's requests"),
    ("answer_interaction", "answer a request"),
    ("publish_event", "publish an event"),
    ("list_playbook_events", "list the playbook's events"),
    ("get_event", "read an event"),
    ("search", "search the tool servers' tools"),
    ("introspect", "read a tool of a tool server"),
    ("execute", "call a tool of a tool server"),
    ("dry_run", "check a tool call without making it"),
    ("delete_org", "delete an org"),
    ("delete_playbook", "delete a playbook"),
    ("purge_runs", "purge ended runs"),
];

/// The prefix of every tool's title: the server's name, as the tool would be told apart from
/// another server's `run` or `search`.
pub const TITLE_PREFIX: &str = "auto: ";

/// The title of an operation's tool, such as `auto: run a definition`; an operation without an
/// entry is titled by its name.
pub fn title(op: &Operation) -> String {
    let words = TITLES
        .iter()
        .find(|(name, _)| *name == op.name)
        .map_or_else(
            || op.name.replace('_', " "),
            |(_, title)| (*title).to_owned(),
        );
    format!("{TITLE_PREFIX}{words}")
}

/// The description of an operation's tool. How a rejection comes back is said once, in the
/// server's instructions, rather than at the end of every tool.
pub fn for_model(op: &Operation) -> String {
    DESCRIPTIONS
        .iter()
        .find(|(name, _)| *name == op.name)
        .map(|(_, description)| *description)
        .unwrap_or(op.summary)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::OPERATIONS;

    #[test]
    fn every_description_names_an_operation() {
        for (name, _) in DESCRIPTIONS {
            assert!(
                OPERATIONS.iter().any(|op| op.name == *name),
                "{name} is no operation"
            );
        }
    }

    #[test]
    fn every_operation_has_a_title_of_its_own() {
        let mut titles: Vec<String> = OPERATIONS.iter().map(title).collect();
        for (op, title) in OPERATIONS.iter().zip(&titles) {
            assert!(
                TITLES.iter().any(|(name, _)| *name == op.name),
                "{} has no title",
                op.name
            );
            assert!(title.starts_with(TITLE_PREFIX), "{title}");
        }
        assert_eq!(
            title(
                OPERATIONS
                    .iter()
                    .find(|op| op.name == "run_definition")
                    .unwrap()
            ),
            "auto: run a definition"
        );
        for (name, _) in TITLES {
            assert!(
                OPERATIONS.iter().any(|op| op.name == *name),
                "{name} is no operation"
            );
        }
        titles.sort();
        titles.dedup();
        assert_eq!(titles.len(), OPERATIONS.len(), "two tools share a title");
        let op = Operation {
            name: "not_titled",
            ..OPERATIONS[0]
        };
        assert_eq!(title(&op), "auto: not titled");
    }

    #[test]
    fn an_operation_without_a_description_is_described_by_its_summary() {
        let op = Operation {
            name: "not_described",
            ..OPERATIONS[0]
        };
        assert!(for_model(&op).starts_with(OPERATIONS[0].summary));
    }
}
