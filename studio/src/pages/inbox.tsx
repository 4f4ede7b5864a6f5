import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, get, pbPath, qs, ApiError, type InboxRequest } from '../api';
import { useStore } from '../store';
import { pbHref, href } from '../router';
import { meStore, can } from '../session';
import { useLiveListing } from '../live';
import { missingRequired, placeIssues } from '../lib/schemaForm.js';
import { describe, initialValue, SchemaForm } from '../form';
import { ErrorBox, Loading, StatusPill, Markdown, JsonBlock, Empty, ProblemView } from '../ui';
import { when, ago } from '../format';

const STATUSES = ['open', 'answered', 'expired', 'undelivered', 'cancelled'];

export function InboxPage({ org, pb, query }: { org: string; pb: string; query: URLSearchParams }) {
  const status = query.get('status') || 'open';
  const focus = query.get('request') || '';
  // Listed once the stream's place is known, and again after each request or run fact.
  const list = useLiveListing(org, pb, (signal) => get<{ requests: InboxRequest[] }>(`${pbPath(org, pb)}/requests${qs({ status, limit: 200 })}`, signal), [status], (e) => e.type.startsWith('request_') || e.type.startsWith('run_'), 500);
  const requests = list.data?.requests || [];
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={href([])}>Playbooks</a> / {org} / {pb}</p>
          <h1>Inbox</h1>
          <p class="muted">What the playbook's runs ask people; answering a request ends its run with the answer.</p>
        </div>
      </header>
      <nav class="tabs" aria-label="Requests by status">
        {STATUSES.map((s) => <a key={s} href={href(['orgs', org, 'playbooks', pb, 'inbox'], { status: s })} aria-current={s === status ? 'page' : undefined} class={s === status ? 'active' : ''}>{s}</a>)}
      </nav>
      {list.error ? <ErrorBox error={list.error} /> : null}
      {!list.data && list.loading && <Loading />}
      {list.data && requests.length === 0 && <Empty>{status === 'open' ? 'Nothing waits for an answer.' : `No ${status} request.`}</Empty>}
      {requests.map((r) => <RequestCard key={r.request_id} org={org} pb={pb} request={r} focused={r.request_id === focus} onAnswered={list.reload} />)}
    </div>
  );
}

function RequestCard({ org, pb, request, focused, onAnswered }: { org: string; pb: string; request: InboxRequest; focused: boolean; onAnswered: () => void }) {
  const me = useStore(meStore);
  const field = useMemo(() => describe(request.output_schema || {}), [request.output_schema]);
  const [value, setValue] = useState<unknown>(() => initialValue(field) ?? (field.kind === 'object' ? {} : undefined));
  const [problem, setProblem] = useState<unknown>(null);
  const [local, setLocal] = useState<{ pointer: string; message: string }[]>([]);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<InboxRequest | null>(null);
  useEffect(() => { if (focused) document.getElementById(`req-${request.request_id}`)?.scrollIntoView(); }, [focused]);
  const serverIssues = problem instanceof ApiError && problem.status === 422 ? problem.problem.issues || [] : [];
  const placed = placeIssues([...local.map((l) => ({ pointer: `/answer${l.pointer}`, message: l.message })), ...serverIssues], '/answer', field);
  const answer = async (e: Event) => {
    e.preventDefault();
    const missing = missingRequired(field, value);
    setLocal(missing);
    setProblem(null);
    if (missing.length) return;
    setBusy(true);
    try {
      const answered = await api<InboxRequest>('POST', `${pbPath(org, pb)}/requests/${encodeURIComponent(request.request_id)}/answer`, { answer: value });
      setDone(answered);
      setTimeout(onAnswered, 600);
    } catch (err) {
      setProblem(err);
    } finally {
      setBusy(false);
    }
  };
  const r = done || request;
  return (
    <article class={`card request ${focused ? 'focused' : ''}`} id={`req-${request.request_id}`} data-request={request.request_id} aria-labelledby={`req-h-${request.request_id}`}>
      <header class="card-head">
        <h2 id={`req-h-${request.request_id}`}>{r.definition.name} <span class="muted small">asks {r.to}</span></h2>
        <StatusPill status={r.status} />
      </header>
      <p class="small muted">
        Opened {ago(r.created_at)} ({when(r.created_at)}) · expires {when(r.expires_at)} · <a href={pbHref(org, pb, 'runs', r.run_id)}>its run</a>
      </p>
      <div class="message-body"><Markdown text={r.message || ''} /></div>
      <details><summary>The request's input</summary><JsonBlock value={r.input} label="Input" /></details>
      {r.status === 'answered' && (
        <div class="answered" role="status">
          <strong>Answered{r.answered_by ? ` by ${r.answered_by}` : ''}.</strong>
          <JsonBlock value={r.answer} label="Answer" />
        </div>
      )}
      {r.status === 'open' && (can(me, 'run') ? (
        <form class="form" onSubmit={answer} noValidate aria-label={`Answer ${r.definition.name}`}>
          <h3>Your answer</h3>
          {problem && !(problem instanceof ApiError && problem.status === 422) ? <ProblemView problem={(problem as ApiError).problem || { title: String(problem) }} /> : null}
          {problem instanceof ApiError && problem.status === 422 && <p class="field-error" role="alert">{(problem.problem.title || 'The answer does not match').replace(/\.$/, '')}: fix the fields marked below.</p>}
          {placed.unplaced.length > 0 && <ul class="issues">{placed.unplaced.map((m, i) => <li key={i}>{m}</li>)}</ul>}
          <SchemaForm field={field} value={value} onChange={setValue} issues={placed.byPointer} idPrefix={`a-${request.request_id}`} />
          <div class="form-actions"><button type="submit" class="primary" disabled={busy}>{busy ? 'Sending…' : 'Send the answer'}</button></div>
        </form>
      ) : <p class="muted role-refusal">Your role, {me?.role || 'unknown'}, cannot answer requests: answering needs the role runner or admin.</p>)}
    </article>
  );
}
