import { useEffect, useRef, useState } from 'preact/hooks';
import { get, pbPath, qs, type AutoEvent } from '../api';
import { pbHref, href, navigate } from '../router';
import { follow, logEnd, knownEnd } from '../live';
import { ErrorBox, Loading, JsonBlock, Empty, tone } from '../ui';
import { when, duration } from '../format';

const ROW = 32;
/** How many of the log's latest events the events page opens with. */
const WINDOW = 2000;

function summary(e: AutoEvent): string {
  const d = e.data;
  if (!d || typeof d !== 'object') return e.subject || '';
  if (typeof d.reference === 'string') return `${d.name ?? ''} ${d.definition ? `→ ${d.type ?? ''} ${d.definition}` : ''}`.trim() + (d.error ? ' (failed)' : '');
  if (e.type.startsWith('model_call_')) return `call ${d.number ?? ''} ${d.model || d.resolved_model || ''} ${d.duration_ms !== undefined ? duration(d.duration_ms) : ''}`.trim();
  if (e.type.startsWith('tool_call_')) return ['tool call', d.number, d.server && d.tool && `${d.server}/${d.tool}`, d.duration_ms !== undefined && duration(d.duration_ms), d.because && `(${d.because})`, d.is_error && '(an error)'].filter(Boolean).join(' ');
  if (e.type.startsWith('definition_')) return `${d.type ?? ''} ${d.name ?? ''} v${d.version ?? ''}`;
  if (e.type.startsWith('request_')) return `${d.request_id ?? ''} ${d.to ? `to ${d.to}` : ''}`.trim();
  const text = JSON.stringify(d);
  return `${e.subject ? `${e.subject} ` : ''}${text.length > 140 ? `${text.slice(0, 140)}…` : text}`;
}

function eventTone(type: string): string {
  if (/failed|rejected|refused/.test(type)) return 'bad';
  if (/succeeded|completed|answered|ended/.test(type)) return 'ok';
  if (/wait|opened|retried/.test(type)) return 'warn';
  if (/started|created|updated/.test(type)) return 'info';
  return tone(type);
}

/**
 * A long list of events, drawn a window at a time (fixed row height), so a run of thousands of
 * events costs the rows on screen only. A row opens the event in full beside the list.
 */
export function EventList({ org, pb, events, start, height = 480, showRun = true, follow: stick = false }: { org: string; pb: string; events: AutoEvent[]; start?: string; height?: number; showRun?: boolean; follow?: boolean }) {
  const [scroll, setScroll] = useState(0);
  const [selected, setSelected] = useState<AutoEvent | null>(null);
  const [full, setFull] = useState<AutoEvent | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const startMs = start ? new Date(start).getTime() : null;
  const total = events.length * ROW;
  const first = Math.max(0, Math.floor(scroll / ROW) - 10);
  const last = Math.min(events.length, Math.ceil((scroll + height) / ROW) + 10);
  // A followed log opens at its end, like a terminal's tail, and stays there as events come.
  useEffect(() => {
    if (stick && box.current) {
      box.current.scrollTop = box.current.scrollHeight;
      setScroll(box.current.scrollTop);
    }
  }, []);
  useEffect(() => {
    if (stick && box.current) {
      const el = box.current;
      if (el.scrollHeight - el.scrollTop - el.clientHeight < ROW * 4) {
        el.scrollTop = el.scrollHeight;
        setScroll(el.scrollTop);
      }
    }
  }, [events.length]);
  useEffect(() => {
    setFull(null);
    if (selected && selected.data_bytes !== undefined && selected.data === undefined) {
      get<AutoEvent>(`${pbPath(org, pb)}/events/${encodeURIComponent(selected.id)}`).then(setFull, () => {});
    }
  }, [selected]);
  if (events.length === 0) return <Empty>No events.</Empty>;
  const rows = [];
  for (let i = first; i < last; i++) {
    const e = events[i];
    const t = new Date(e.time).getTime();
    rows.push(
      <li key={e.seq} role="listitem" aria-setsize={events.length} aria-posinset={i + 1} class={`event-row ${selected?.seq === e.seq ? 'selected' : ''}`} style={{ top: `${i * ROW}px` }} data-seq={e.seq} data-type={e.type}>
        <button type="button" onClick={() => setSelected(e)} aria-pressed={selected?.seq === e.seq}>
          <span class="seq">#{e.seq}</span>
          {startMs !== null && Number.isFinite(t) ? <span class="time">+{duration(t - startMs)}</span> : <span class="time abs" title={e.time}>{when(e.time)}</span>}
          <span class={`etype tone-${eventTone(e.type)}`}>{e.type}</span>
          <span class="esum">{summary(e)}</span>
          {showRun && e.run_id && <span class="erun mono">{e.run_id.slice(0, 8)}</span>}
        </button>
      </li>,
    );
  }
  return (
    <div class="event-list-wrap">
      <div class="event-list" ref={box} style={{ height: `${Math.min(height, total + 2)}px` }} onScroll={(ev) => setScroll((ev.target as HTMLDivElement).scrollTop)} tabIndex={0} role="region" aria-label={`Events, ${events.length} in order`}>
        <ul role="list" style={{ height: `${total}px` }}>{rows}</ul>
      </div>
      {selected && (
        <div class="event-detail card" aria-live="polite">
          <div class="card-head">
            <h3>Event #{selected.seq}: {selected.type}</h3>
            <button type="button" class="link" onClick={() => setSelected(null)}>Close</button>
          </div>
          <p class="small muted">{when(selected.time)} · {selected.source}{selected.run_id ? <> · <a href={pbHref(org, pb, 'runs', selected.run_id)}>run</a></> : null}</p>
          <JsonBlock value={full || selected} label={`Event ${selected.seq}`} />
        </div>
      )}
    </div>
  );
}

export function EventsPage({ org, pb, query }: { org: string; pb: string; query: URLSearchParams }) {
  const type = query.get('type') || '';
  const runId = query.get('run_id') || '';
  const [typeText, setTypeText] = useState(type);
  const [runText, setRunText] = useState(runId);
  const [events, setEvents] = useState<AutoEvent[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [from, setFrom] = useState(0);
  const [truncated, setTruncated] = useState(false);
  const [earlierBusy, setEarlierBusy] = useState(false);
  const pageUrl = (after: number | string | null, limit = 1000) => `${pbPath(org, pb)}/events${qs({ type, run_id: runId, limit, after })}`;
  useEffect(() => {
    setTypeText(type);
    setRunText(runId);
    const controller = new AbortController();
    let stop = () => {};
    setEvents(null);
    setError(null);
    (async () => {
      // Unfiltered, the log opens at its latest events (found from its newest seq); filtered,
      // from its start. Then it follows the stream from the last event listed.
      let start = 0;
      if (!type && !runId) {
        const head = await logEnd(org, pb, controller.signal, knownEnd(org, pb) ?? 0);
        start = Math.max(0, head - WINDOW);
      }
      let list: AutoEvent[] = [];
      let after: string | null = start ? String(start) : null;
      let cut = false;
      for (let i = 0; i < 200; i++) {
        const page: { events: AutoEvent[]; next: string | null } = await get(pageUrl(after), controller.signal);
        list = list.concat(page.events);
        if (list.length > 5000) { list = list.slice(-5000); cut = true; }
        if (!page.next || page.events.length === 0) break;
        after = page.next;
      }
      if (controller.signal.aborted) return;
      setFrom(cut ? list[0].seq - 1 : start);
      setTruncated(cut);
      setEvents(list);
      const last = list.length ? list[list.length - 1].seq : Number(after || start || 0);
      const seen = new Set(list.map((e) => e.seq));
      stop = follow(org, pb, { after: last, type, run_id: runId }, (e) => {
        if (seen.has(e.seq)) return;
        seen.add(e.seq);
        setEvents((prev) => [...(prev || []), e]);
      });
    })().catch((e) => !controller.signal.aborted && setError(e));
    return () => { controller.abort(); stop(); };
  }, [org, pb, type, runId]);
  const earlier = async () => {
    if (!events || from <= 0) return;
    setEarlierBusy(true);
    try {
      const start = Math.max(0, from - WINDOW);
      let older: AutoEvent[] = [];
      let after: string | null = start ? String(start) : null;
      for (let i = 0; i < 10; i++) {
        const page: { events: AutoEvent[]; next: string | null } = await get(pageUrl(after));
        older = older.concat(page.events.filter((e) => e.seq <= from));
        if (!page.next || page.events.length === 0 || page.events[page.events.length - 1].seq >= from) break;
        after = page.next;
      }
      setEvents([...older, ...events]);
      setFrom(start);
    } catch (e) {
      setError(e);
    } finally {
      setEarlierBusy(false);
    }
  };
  const apply = (e: Event) => {
    e.preventDefault();
    navigate(href(['orgs', org, 'playbooks', pb, 'events'], { type: typeText.trim(), run_id: runText.trim() }));
  };
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={href([])}>Playbooks</a> / {org} / {pb}</p>
          <h1>Events</h1>
          <p class="muted">The playbook's log, oldest first; new events arrive at the bottom as they are recorded.</p>
        </div>
      </header>
      <form class="filters" role="search" aria-label="Filter the events" onSubmit={apply}>
        <div class="field"><label for="ef-type">Type</label><input id="ef-type" value={typeText} placeholder="such as run_started" onInput={(e) => setTypeText((e.target as HTMLInputElement).value)} /></div>
        <div class="field"><label for="ef-run">Run id</label><input id="ef-run" class="mono" value={runText} placeholder="any run" onInput={(e) => setRunText((e.target as HTMLInputElement).value)} /></div>
        <button type="submit">Filter</button>
        {(type || runId) && <a href={pbHref(org, pb, 'events')}>Clear</a>}
      </form>
      {error ? <ErrorBox error={error} /> : null}
      {!events && !error && <Loading what="Loading the log" />}
      {events && from > 0 && !type && !runId && (
        <p class="small"><span class="muted">Showing the log after event #{from}{truncated ? ' (the latest 5,000 listed)' : ''}.</span> <button type="button" class="small" onClick={earlier} disabled={earlierBusy}>Load earlier events</button></p>
      )}
      {truncated && (type || runId) && <p class="muted small">Showing the latest 5,000 events that match.</p>}
      {events && <div class="card"><EventList org={org} pb={pb} events={events} height={560} follow /></div>}
    </div>
  );
}
