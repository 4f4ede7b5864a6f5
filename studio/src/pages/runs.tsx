import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, get, defPath, pbPath, qs, ApiError, type AutoEvent, type Definition, type Run, type InboxRequest } from '../api';
import { useStore } from '../store';
import { pbHref, href, navigate } from '../router';
import { meStore, can } from '../session';
import { follow, keepListing } from '../live';
import { readRunFilters, runQuery, runMatches, eventVerdict, mergeRuns, presetOf, toLocalInput, fromLocalInput, RUN_STATUSES, RUN_REASONS, TIME_PRESETS, type RunFilters, type RunQuery } from '../lib/runs.js';
import { mermaidBlock, stepTree, taskStates, nodeStates, nodeForReference } from '../lib/workflow.js';
import { missingRequired, placeIssues } from '../lib/schemaForm.js';
import { describe, initialValue, SchemaForm } from '../form';
import { OutputView } from '../output';
import { ErrorBox, Loading, StatusPill, useAsync, useThrottled, JsonBlock, Mermaid, Legend, ProblemView, Section, Empty, STATE_WORDS, RoleRefusal } from '../ui';
import { when, ago, duration, between, usd } from '../format';
import { TYPES } from './definitions';
import { EventList } from './events';

const PAGE = 100;
/** More runs than this to read again at once: list again instead. */
const BURST = 40;

type RunPage = { runs: Run[]; next: string | null };

/** Reads runs one by one (a few at a time): each the run as it is now, or null when gone. */
async function readRuns(org: string, pb: string, ids: string[], signal: AbortSignal): Promise<Array<[string, Run | null]>> {
  const out: Array<[string, Run | null]> = [];
  let i = 0;
  const worker = async () => {
    while (i < ids.length) {
      const id = ids[i++];
      try {
        out.push([id, await get<Run>(`${pbPath(org, pb)}/runs/${encodeURIComponent(id)}`, signal)]);
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) out.push([id, null]);
        else if ((e as Error).name === 'AbortError') return;
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return out;
}

export function RunsPage({ org, pb, query }: { org: string; pb: string; query: URLSearchParams }) {
  const f = readRunFilters(query);
  const filterKey = JSON.stringify(f);
  const [nameText, setNameText] = useState(f.name);
  const [customRange, setCustomRange] = useState(false);
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [moreBusy, setMoreBusy] = useState(false);
  const runsRef = useRef<Run[] | null>(null);
  runsRef.current = runs;
  // How many pages "more" has added: a listing asked before the last of them ended is
  // shorter than the list shown, and is asked again rather than shown.
  const moreDone = useRef(0);
  // The query of the listing shown (a preset's time is fixed when it is listed), for "more".
  const shownQuery = useRef<RunQuery>(runQuery(f, Date.now()));
  const names = useAsync((signal) => get<{ definitions: Array<{ type: string; name: string }> }>(`${pbPath(org, pb)}/definitions${qs({ type: f.type })}`, signal), [org, pb, f.type]);

  useEffect(() => setNameText(f.name), [f.name]);
  // Listed once the stream's place is known, then kept current from the stream: a run that
  // comes to match the filters joins the list, one that stops matching leaves it.
  useEffect(() => {
    const path = `${pbPath(org, pb)}/runs`;
    const controller = new AbortController();
    const waiting = new Set<string>();
    const gone = new Set<string>();
    let timer: number | null = null;
    setRuns(null);
    setNext(null);
    setError(null);
    const listing = (signal: AbortSignal) => {
      const q = runQuery(f, Date.now());
      shownQuery.current = q;
      const limit = Math.min(1000, Math.max(PAGE, runsRef.current?.length || 0));
      const asked = moreDone.current;
      return get<RunPage>(`${path}${qs({ ...q, limit })}`, signal).then((page) => ({ ...page, asked }));
    };
    const flush = async () => {
      timer = null;
      const ids = [...waiting];
      waiting.clear();
      const removed = [...gone];
      gone.clear();
      if (ids.length > BURST) {
        kept.relist();
        return;
      }
      const q = shownQuery.current;
      const read = ids.length ? await readRuns(org, pb, ids, controller.signal) : [];
      if (controller.signal.aborted) return;
      const add: Run[] = [];
      for (const [id, run] of read) {
        if (run && runMatches(run, q)) add.push({ ...run, input: undefined, output: undefined, record: undefined });
        else removed.push(id);
      }
      setRuns((list) => (list ? mergeRuns(list, add, removed) : list));
    };
    const kept = keepListing<RunPage & { asked: number }>(org, pb, {
      list: listing,
      onList: (page) => {
        if (page.asked !== moreDone.current) {
          kept.relist();
          return;
        }
        setRuns(page.runs);
        setNext(page.next);
        setError(null);
      },
      onError: (e) => setError(e),
      apply: (events) => {
        const q = shownQuery.current;
        for (const e of events) {
          const verdict = eventVerdict(e, q);
          if (verdict === 'ignore' || !e.run_id) continue;
          if (verdict === 'remove') gone.add(e.run_id);
          else waiting.add(e.run_id);
        }
        if ((waiting.size || gone.size) && timer === null) timer = window.setTimeout(flush, 150);
      },
    });
    return () => {
      controller.abort();
      if (timer !== null) clearTimeout(timer);
      kept.stop();
    };
  }, [org, pb, filterKey]);

  const setFilters = (changes: Partial<RunFilters>) => navigate(href(['orgs', org, 'playbooks', pb, 'runs'], { ...f, ...changes }));
  const more = async () => {
    if (!next) return;
    setMoreBusy(true);
    try {
      const page = await get<RunPage>(`${pbPath(org, pb)}/runs${qs({ ...shownQuery.current, limit: PAGE, after: next })}`);
      moreDone.current += 1;
      setRuns((list) => mergeRuns(list || [], page.runs));
      setNext(page.next);
    } catch (e) {
      setError(e);
    } finally {
      setMoreBusy(false);
    }
  };
  const preset = presetOf(f.since);
  const custom = customRange || (!preset && !!(f.since || f.until));
  const rangeValue = preset ? f.since : custom ? 'custom' : '';
  const issues = error instanceof ApiError ? error.problem.issues || [] : [];
  const issueAt = (field: string) => issues.filter((i) => i.pointer === `/query/${field}`).map((i) => i.message).join(' ');
  const sinceIssue = issueAt('since');
  const untilIssue = issueAt('until');
  const otherError = error && !(sinceIssue || untilIssue);
  const filtered = Object.values(f).some(Boolean);
  const nameOptions = [...new Set((names.data?.definitions || []).map((d) => d.name))].sort();
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={href([])}>Playbooks</a> / {org} / {pb}</p>
          <h1>Runs</h1>
        </div>
      </header>
      <form class="filters" role="search" aria-label="Filter the runs" onSubmit={(e) => { e.preventDefault(); setFilters({ name: nameText.trim() }); }}>
        <div class="field"><label for="rf-type">Type</label>
          <select id="rf-type" value={f.type} onChange={(e) => setFilters({ type: (e.target as HTMLSelectElement).value })}>
            <option value="">All types</option>{TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select></div>
        <div class="field"><label for="rf-name">Name</label>
          <input id="rf-name" list="rf-names" value={nameText} onInput={(e) => setNameText((e.target as HTMLInputElement).value)} onChange={(e) => { const v = (e.target as HTMLInputElement).value.trim(); if (v !== f.name) setFilters({ name: v }); }} placeholder="any" />
          <datalist id="rf-names">{nameOptions.map((n) => <option key={n} value={n} />)}</datalist></div>
        <div class="field"><label for="rf-status">Status</label>
          <select id="rf-status" value={f.status} onChange={(e) => setFilters({ status: (e.target as HTMLSelectElement).value })}>
            <option value="">Any status</option>{RUN_STATUSES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select></div>
        <div class="field"><label for="rf-reason">Reason</label>
          <select id="rf-reason" value={f.reason} onChange={(e) => setFilters({ reason: (e.target as HTMLSelectElement).value })}>
            <option value="">Any reason</option>{RUN_REASONS.map((t) => <option key={t} value={t}>{t}</option>)}
          </select></div>
        <div class="field"><label for="rf-since">Started</label>
          <select id="rf-since" value={rangeValue} onChange={(e) => {
            const v = (e.target as HTMLSelectElement).value;
            if (v === 'custom') {
              // A range starts from the preset's time (or the last 24 hours), to the minute.
              setCustomRange(true);
              if (!f.since || preset) setFilters({ since: fromLocalInput(toLocalInput(new Date(Date.now() - (preset ? preset[2] : 86400e3)).toISOString())) });
            } else {
              setCustomRange(false);
              setFilters({ since: v, until: '' });
            }
          }}>
            <option value="">Any time</option>
            {TIME_PRESETS.map(([k, label]) => <option key={k} value={k}>{label}</option>)}
            <option value="custom">Between times…</option>
          </select></div>
        {custom && (
          <>
            <div class={`field ${sinceIssue ? 'invalid' : ''}`}><label for="rf-from">From</label>
              <input id="rf-from" type="datetime-local" value={preset ? '' : toLocalInput(f.since)} aria-invalid={sinceIssue ? 'true' : undefined} aria-describedby={sinceIssue ? 'rf-from-error' : undefined}
                onChange={(e) => setFilters({ since: fromLocalInput((e.target as HTMLInputElement).value) })} />
              {sinceIssue && <p class="field-error" id="rf-from-error" role="alert">{sinceIssue}</p>}</div>
            <div class={`field ${untilIssue ? 'invalid' : ''}`}><label for="rf-until">Before</label>
              <input id="rf-until" type="datetime-local" value={toLocalInput(f.until)} aria-invalid={untilIssue ? 'true' : undefined} aria-describedby={untilIssue ? 'rf-until-error' : undefined}
                onChange={(e) => setFilters({ until: fromLocalInput((e.target as HTMLInputElement).value) })} />
              {untilIssue && <p class="field-error" id="rf-until-error" role="alert">{untilIssue}</p>}</div>
          </>
        )}
        <button type="submit" class="sr-only">Filter</button>
        {filtered && <a class="clear-filters" href={pbHref(org, pb, 'runs')} onClick={() => setCustomRange(false)}>Clear the filters</a>}
      </form>
      {otherError ? <ErrorBox error={error} /> : null}
      {runs === null && !error && <Loading what="Loading the runs" />}
      {runs && runs.length === 0 && !error && <Empty>No run matches.</Empty>}
      {runs && runs.length > 0 && (
        <div class="card flush">
          <table class="list runs-table" data-count={runs.length}>
            <caption class="sr-only">Runs{filtered ? ' that match the filters' : ''}, newest first</caption>
            <thead><tr><th scope="col">Status</th><th scope="col">Definition</th><th scope="col">Run</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">By</th><th scope="col">Reason</th></tr></thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.run_id} data-run={r.run_id} data-status={r.status}>
                  <td><StatusPill status={r.status} /></td>
                  <td><span class={`type-badge type-${r.type}`}>{r.type}</span> {r.name} <span class="muted">v{r.definition_version}</span></td>
                  <td><a class="mono" href={pbHref(org, pb, 'runs', r.run_id)}>{shortId(r.run_id)}</a></td>
                  <td title={when(r.started_at)}>{ago(r.started_at)}</td>
                  <td>{r.ended_at ? duration(between(r.started_at, r.ended_at)) : <span class="muted">going on</span>}</td>
                  <td>{r.started_by}</td>
                  <td>{r.problem?.reason ? <span class="tag">{r.problem.reason}{r.problem.kind ? ` · ${r.problem.kind}` : ''}</span> : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {runs && next && <button type="button" class="more-runs" onClick={more} disabled={moreBusy}>{moreBusy ? 'Loading…' : 'Load more'}</button>}
    </div>
  );
}

export function shortId(id: string): string {
  if (id.length <= 24) return id;
  const dot = id.indexOf('.');
  if (dot > 0) return `${id.slice(0, 8)}…${id.slice(dot, dot + 9)}`;
  return `${id.slice(0, 8)}…${id.slice(-6)}`;
}

async function allEvents(org: string, pb: string, runId: string, signal: AbortSignal): Promise<AutoEvent[]> {
  const out: AutoEvent[] = [];
  let after: string | null = null;
  for (let i = 0; i < 100; i++) {
    const page: { events: AutoEvent[]; next: string | null } = await get(`${pbPath(org, pb)}/events${qs({ run_id: runId, limit: 1000, after })}`, signal);
    out.push(...page.events);
    if (!page.next || page.events.length === 0) break;
    after = page.next;
  }
  return out;
}

export function RunPage({ org, pb, runId }: { org: string; pb: string; runId: string }) {
  const me = useStore(meStore);
  const run = useAsync((signal) => get<Run>(`${pbPath(org, pb)}/runs/${encodeURIComponent(runId)}`, signal), [org, pb, runId]);
  const r = run.data;
  const def = useAsync(
    (signal) => (r ? get<Definition>(`${defPath(org, pb, r.type, r.name)}${qs({ version: r.definition_version })}`, signal) : Promise.resolve(null)),
    [org, pb, r?.type, r?.name, r?.definition_version],
  );
  const [events, setEvents] = useState<AutoEvent[] | null>(null);
  const [eventsError, setEventsError] = useState<unknown>(null);
  const reloadRun = useThrottled(run.reload, 250);
  // The run's events so far, then the stream of its own (run_id=) from the last one.
  useEffect(() => {
    const controller = new AbortController();
    let stop = () => {};
    setEvents(null);
    allEvents(org, pb, runId, controller.signal).then((list) => {
      if (controller.signal.aborted) return;
      setEvents(list);
      const seen = new Set(list.map((e) => e.seq));
      const last = list.length ? list[list.length - 1].seq : 0;
      stop = follow(org, pb, { after: last, run_id: runId }, (e) => {
        if (seen.has(e.seq)) return;
        seen.add(e.seq);
        setEvents((prev) => [...(prev || []), e]);
        reloadRun();
      });
    }, (e) => !controller.signal.aborted && setEventsError(e));
    return () => { controller.abort(); stop(); };
  }, [org, pb, runId]);
  const [cancelError, setCancelError] = useState<unknown>(null);
  const cancel = async () => {
    if (!confirm('Cancel this run?')) return;
    setCancelError(null);
    try { run.setData(await api<Run>('POST', `${pbPath(org, pb)}/runs/${encodeURIComponent(runId)}/cancel`, { detail: 'Cancelled in the Studio' })); } catch (e) { setCancelError(e); }
  };
  if (run.error && !r) return <div class="page"><h1>Run {runId}</h1><ErrorBox error={run.error} /></div>;
  if (!r) return <Loading what="Loading the run" />;
  const parent = runId.includes('.') ? runId.slice(0, runId.lastIndexOf('.')) : null;
  const d = def.data || null;
  return (
    <div class="page run-page" data-run-status={r.status}>
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={pbHref(org, pb, 'runs')}>Runs</a>{parent && <> / <a href={pbHref(org, pb, 'runs', parent)}>parent run</a></>}</p>
          <h1><span class={`type-badge type-${r.type}`}>{r.type}</span> <a href={pbHref(org, pb, 'definitions', r.type, r.name)}>{r.name}</a> <span class="muted">v{r.definition_version}</span></h1>
          <p class="meta"><StatusPill status={r.status} /> <span class="mono small">{r.run_id}</span></p>
        </div>
        <div class="actions">
          {r.status === 'started' && can(me, 'run') && <button type="button" class="danger" onClick={cancel}>Cancel run</button>}
          {can(me, 'run') && <a class="button" href={pbHref(org, pb, 'definitions', r.type, r.name, 'run')}>Run again</a>}
        </div>
      </header>
      {cancelError ? <ErrorBox error={cancelError} /> : null}
      <dl class="facts">
        <div><dt>Started</dt><dd>{when(r.started_at)}</dd></div>
        <div><dt>Ended</dt><dd>{r.ended_at ? when(r.ended_at) : 'going on'}</dd></div>
        <div><dt>Duration</dt><dd>{duration(between(r.started_at, r.ended_at || (r.status === 'started' ? new Date().toISOString() : null)))}</dd></div>
        <div><dt>Started by</dt><dd>{r.started_by}</dd></div>
        <div><dt>Events</dt><dd>{events ? events.length : '…'}</dd></div>
      </dl>
      {r.problem && <ProblemView problem={r.problem} title={`Problem: ${r.problem.title || r.problem.reason}`} />}
      {r.type === 'workflow' && <WorkflowProgress org={org} pb={pb} run={r} def={d} events={events} />}
      {r.type === 'reasoning' && events && <ModelCalls events={events} />}
      {r.type === 'interaction' && r.status === 'started' && <InboxLink org={org} pb={pb} runId={r.run_id} />}
      <div class="grid2">
        <Section title="Input"><JsonBlock value={r.input} label="Input" /></Section>
        <Section title="Output">{r.status === 'started' ? <p class="muted">Not yet: the run is going on.</p> : <OutputView value={r.output} schema={d?.output_schema} />}</Section>
      </div>
      {r.record !== null && r.record !== undefined && (
        <Section title="Record"><details><summary>Show the record</summary><JsonBlock value={r.record} label="Record" /></details></Section>
      )}
      <Section title="Timeline" id="timeline">
        {eventsError ? <ErrorBox error={eventsError} /> : null}
        {!events && !eventsError && <Loading what="Loading the events" />}
        {events && <EventList org={org} pb={pb} events={events} start={r.started_at} height={420} showRun={false} />}
      </Section>
    </div>
  );
}

function InboxLink({ org, pb, runId }: { org: string; pb: string; runId: string }) {
  const reqs = useAsync((signal) => get<{ requests: InboxRequest[] }>(`${pbPath(org, pb)}/requests${qs({ status: 'open', limit: 1000 })}`, signal), [org, pb, runId]);
  const found = reqs.data?.requests.find((q) => q.run_id === runId);
  if (!found) return null;
  return <p class="note">This run waits for an answer from {found.to}. <a href={href(['orgs', org, 'playbooks', pb, 'inbox'], { request: found.request_id })}>Answer it in the inbox</a>.</p>;
}

function WorkflowProgress({ org, pb, run, def, events }: { org: string; pb: string; run: Run; def: Definition | null; events: AutoEvent[] | null }) {
  const chart = def ? mermaidBlock(def.overview) : null;
  const tree = useMemo(() => (chart ? stepTree(chart) : []), [chart]);
  const states = useMemo(() => taskStates(events || [], run.status), [events, run.status]);
  const nodes = useMemo(() => nodeStates(tree, states, run.status), [tree, states, run.status]);
  // The latest child run of each task, to open it.
  const children = useMemo(() => {
    const m = new Map<string, string>();
    for (const e of events || []) if (e.type === 'call_started' && e.data?.reference && e.data?.child_run_id) m.set(e.data.reference, e.data.child_run_id);
    return m;
  }, [events]);
  const tasks = [...states.entries()];
  const times = useMemo(() => {
    const m = new Map<string, number>();
    for (const e of events || []) if (e.type === 'step_started' && e.data?.reference) m.set(e.data.reference, (m.get(e.data.reference) || 0) + 1);
    return m;
  }, [events]);
  // The node map stays the same object while nothing changed, so the diagram is not recoloured needlessly.
  const key = JSON.stringify([...nodes]);
  const stableNodes = useMemo(() => nodes, [key]);
  return (
    <Section title="Steps" id="steps">
      {!def && <Loading what="Loading the diagram" />}
      {def && !chart && <p class="muted">This workflow's overview has no flowchart.</p>}
      {chart && events && (
        <div class="workflow-diagram" data-node-states={key}>
          <Mermaid source={chart} states={stableNodes} label={`Flowchart of ${run.name}, each step coloured by what it did`} />
          <Legend />
        </div>
      )}
      {tasks.length > 0 && (
        <table class="list compact" aria-label="What each step did">
          <thead><tr><th scope="col">Step</th><th scope="col">Where</th><th scope="col">State</th><th scope="col">Times</th><th scope="col">Call</th></tr></thead>
          <tbody>
            {tasks.map(([ref, state]) => (
              <tr key={ref} data-reference={ref} data-state={state}>
                <td>{ref.split('/').pop()}</td>
                <td class="mono small">{ref}{tree.length ? <span class="muted"> ({nodeForReference(tree, ref) || '—'})</span> : null}</td>
                <td><StatusPill status={state} label={STATE_WORDS[state]} /></td>
                <td>{times.get(ref) || ''}</td>
                <td>{children.get(ref) ? <a href={pbHref(org, pb, 'runs', children.get(ref)!)}>open the call's run</a> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

interface ModelCall { number: number; started?: AutoEvent; ended?: AutoEvent; failed?: boolean }

function ModelCalls({ events }: { events: AutoEvent[] }) {
  const calls = new Map<number, ModelCall>();
  const tools = new Map<string, { started?: AutoEvent; ended?: AutoEvent; failed?: boolean }>();
  for (const e of events) {
    if (e.type.startsWith('model_call_')) {
      const n = Number(e.data?.number ?? calls.size + 1);
      const c = calls.get(n) || { number: n };
      if (e.type === 'model_call_started') c.started = e;
      else { c.ended = e; c.failed = e.type === 'model_call_failed'; }
      calls.set(n, c);
    } else if (e.type.startsWith('tool_call_')) {
      // A tool call's start and end share its number (the end carries no call_id).
      const id = String(e.data?.number ?? e.data?.call_id ?? tools.size + 1);
      const t = tools.get(id) || {};
      if (e.type === 'tool_call_started') t.started = e;
      else { t.ended = e; t.failed = e.type === 'tool_call_failed'; }
      tools.set(id, t);
    }
  }
  if (calls.size === 0 && tools.size === 0) return null;
  return (
    <Section title="Model calls" id="model-calls">
      {[...calls.values()].map((c) => {
        const s = c.started?.data || {};
        const a = c.ended?.data || {};
        const usage = a.usage || {};
        const input = [usage.input_uncached, usage.cache_read, usage.cache_write].reduce((x: number, y: any) => x + (typeof y === 'number' ? y : 0), 0);
        const output = [usage.output_text, usage.output_reasoning].reduce((x: number, y: any) => x + (typeof y === 'number' ? y : 0), 0);
        const answer = a.response?.text ?? a.response?.json ?? a.response;
        return (
          <article class="call" key={c.number} data-model-call={c.number}>
            <header class="call-head">
              <strong>Call {c.number}</strong>
              <StatusPill status={!c.ended ? 'running' : c.failed ? 'failed' : 'done'} label={!c.ended ? 'waiting for the model' : c.failed ? 'failed' : 'answered'} />
            </header>
            <dl class="facts small">
              <div><dt>Model</dt><dd>{s.model || a.resolved_model || '—'}{a.answered_model && a.answered_model !== s.model ? ` (answered by ${a.answered_model})` : ''}</dd></div>
              <div><dt>Tokens in</dt><dd>{input}</dd></div>
              <div><dt>Tokens out</dt><dd>{output}</dd></div>
              <div><dt>Total</dt><dd>{usage.total ?? '—'}</dd></div>
              <div><dt>Cost</dt><dd>{usd(a.cost_usd ?? a.cost)}</dd></div>
              <div><dt>Duration</dt><dd>{duration(a.duration_ms)}</dd></div>
              <div><dt>Finish</dt><dd>{a.finish_reason || (c.failed ? a.because || a.reason || 'failed' : '—')}</dd></div>
            </dl>
            {Array.isArray(s.messages) && (
              <details><summary>Messages it adds ({s.messages.length})</summary>
                {s.messages.map((m: any, i: number) => (
                  <div class="message" key={i}><span class="tag">{m.role}</span><pre class="wrap">{typeof m.content === 'string' ? m.content : JSON.stringify(m.content, null, 2)}</pre></div>
                ))}
              </details>
            )}
            {s.messages_bytes && !Array.isArray(s.messages) && <p class="muted small">Messages it adds: {s.messages_bytes} bytes (open the event in the timeline to read them).</p>}
            {answer != null && answer !== '' && <div class="answer"><strong>Answer</strong><pre class="wrap">{typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2)}</pre></div>}
            {Array.isArray(a.tool_calls) && a.tool_calls.length > 0 && <details><summary>Tool calls asked ({a.tool_calls.length})</summary><JsonBlock value={a.tool_calls} /></details>}
            {c.failed && <JsonBlock value={a} label="The failure" />}
          </article>
        );
      })}
      {tools.size > 0 && (
        <>
          <h3>Tool calls</h3>
          <table class="list compact">
            <thead><tr><th scope="col">Tool</th><th scope="col">State</th><th scope="col">Duration</th><th scope="col">Arguments and result</th></tr></thead>
            <tbody>
              {[...tools.entries()].map(([id, t]) => {
                const s = t.started?.data || {};
                const a = t.ended?.data || {};
                return (
                  <tr key={id} data-tool-call={id}>
                    <td>{s.server && s.tool ? `${s.server}/${s.tool}` : s.tool || s.name || id}{s.read_only === false ? <span class="tag">changes things</span> : null}</td>
                    <td><StatusPill status={!t.ended ? 'running' : t.failed ? 'failed' : 'done'} /></td>
                    <td>{duration(a.duration_ms ?? between(t.started?.time, t.ended?.time))}</td>
                    <td><details><summary>Show</summary><JsonBlock value={{ arguments: s.arguments ?? null, result: a.result ?? null, ...(t.failed ? { because: a.because ?? null, message: a.message ?? null } : {}) }} /></details></td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </Section>
  );
}

export function StartRunPage({ org, pb, type, name }: { org: string; pb: string; type: string; name: string }) {
  const me = useStore(meStore);
  const def = useAsync((signal) => get<Definition>(defPath(org, pb, type, name), signal), [org, pb, type, name]);
  const field = useMemo(() => (def.data ? describe(def.data.input_schema || {}) : null), [def.data]);
  const [value, setValue] = useState<unknown>(undefined);
  const [runId, setRunId] = useState('');
  const [problem, setProblem] = useState<unknown>(null);
  const [local, setLocal] = useState<{ pointer: string; message: string }[]>([]);
  const [busy, setBusy] = useState(false);
  useEffect(() => { if (field) setValue(initialValue(field) ?? {}); }, [field]);
  if (!can(me, 'run')) return <RoleRefusal title={`Run ${name}`} role={me?.role} what="start runs" needs="runner or admin" back={pbHref(org, pb, 'definitions', type, name)} backLabel={`Back to ${type} ${name}`} />;
  if (def.error) return <ErrorBox error={def.error} />;
  if (!def.data || !field) return <Loading />;
  const serverIssues = problem instanceof ApiError && problem.problem.reason === 'invalid_input' ? problem.problem.issues || [] : [];
  const placed = placeIssues([...local.map((l) => ({ pointer: `/input${l.pointer}`, message: l.message })), ...serverIssues], '/input', field);
  const submit = async (e: Event) => {
    e.preventDefault();
    const missing = missingRequired(field, value);
    setLocal(missing);
    setProblem(null);
    if (missing.length) return;
    setBusy(true);
    try {
      const body: any = { input: value ?? {} };
      if (runId.trim()) body.run_id = runId.trim();
      const started = await api<Run>('POST', `${defPath(org, pb, type, name)}/runs`, body);
      navigate(pbHref(org, pb, 'runs', started.run_id));
    } catch (err) {
      if (err instanceof ApiError && err.problem.run_id && err.problem.reason !== 'invalid_input') navigate(pbHref(org, pb, 'runs', err.problem.run_id));
      else setProblem(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={pbHref(org, pb, 'definitions', type, name)}>{type} {name}</a></p>
          <h1>Run {name}</h1>
          {def.data.description && <p class="lead">{def.data.description}</p>}
        </div>
      </header>
      <form class="card form" onSubmit={submit} noValidate aria-labelledby="run-form-h">
        <h2 id="run-form-h">Input</h2>
        {problem ? <ProblemView problem={(problem as ApiError).problem || { title: String(problem) }} /> : null}
        {placed.unplaced.length > 0 && !problem && <ul class="issues">{placed.unplaced.map((m, i) => <li key={i}>{m}</li>)}</ul>}
        <SchemaForm field={field} value={value} onChange={setValue} issues={placed.byPointer} idPrefix="in" />
        <details>
          <summary>Run id (optional)</summary>
          <div class="field"><label for="run-id">Your id for the run</label><input id="run-id" class="mono" value={runId} onInput={(e) => setRunId((e.target as HTMLInputElement).value)} /></div>
        </details>
        <details><summary>The input as JSON</summary><JsonBlock value={value ?? {}} label="The input as JSON" /></details>
        <div class="form-actions"><button type="submit" class="primary" disabled={busy}>{busy ? 'Starting…' : 'Start the run'}</button></div>
      </form>
    </div>
  );
}
