// The runs list's filters: read from the page's address (so a filtered view can be shared and
// reloaded), turned into list_runs' query, and matched against a run or an event of the log
// for the live updates.

export const RUN_STATUSES = ['started', 'succeeded', 'rejected', 'failed'];
export const RUN_REASONS = ['invalid_input', 'forbidden', 'not_found', 'conflict', 'unavailable', 'cancelled', 'unanswered', 'failed'];
/** The time presets of the Started filter: the address keeps the preset, the query its time. */
export const TIME_PRESETS = /** @type {Array<[string, string, number]>} */ ([
  ['1h', 'Last hour', 3600e3],
  ['24h', 'Last 24 hours', 86400e3],
  ['7d', 'Last 7 days', 7 * 86400e3],
  ['30d', 'Last 30 days', 30 * 86400e3],
]);
/** The run facts of the log, and the status each tells. */
export const RUN_FACTS = /** @type {Record<string, string>} */ ({
  run_started: 'started',
  run_succeeded: 'succeeded',
  run_rejected: 'rejected',
  run_failed: 'failed',
});

/**
 * @typedef {{ type: string, name: string, status: string, reason: string, since: string, until: string }} RunFilters
 * @typedef {{ type?: string, name?: string, status?: string, reason?: string, since?: string, until?: string }} RunQuery
 * @typedef {{ run_id: string, type: string, name: string, status: string, problem?: { reason?: string } | null, started_at: string }} RunLike
 */

/**
 * The filters an address gives (`#/…/runs?type=&name=&status=&reason=&since=&until=`).
 * @param {URLSearchParams} params
 * @returns {RunFilters}
 */
export function readRunFilters(params) {
  const get = (/** @type {string} */ k) => (params.get(k) || '').trim();
  return { type: get('type'), name: get('name'), status: get('status'), reason: get('reason'), since: get('since'), until: get('until') };
}

/** @param {string} since */
export function presetOf(since) {
  return TIME_PRESETS.find((p) => p[0] === since) || null;
}

/**
 * list_runs' query for the filters: a preset such as `24h` becomes the time that long before
 * `now`; other values go as they are (the server checks them).
 * @param {RunFilters} f
 * @param {number} now
 * @returns {RunQuery}
 */
export function runQuery(f, now) {
  /** @type {RunQuery} */
  const q = {};
  if (f.type) q.type = f.type;
  if (f.name) q.name = f.name;
  if (f.status) q.status = f.status;
  if (f.reason) q.reason = f.reason;
  const preset = presetOf(f.since);
  if (preset) q.since = new Date(now - preset[2]).toISOString();
  else if (f.since) q.since = f.since;
  if (f.until) q.until = f.until;
  return q;
}

/** @param {string | undefined} iso */
function ms(iso) {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
}

/**
 * Whether a run belongs to the list of `q`, as the server would list it.
 * @param {RunLike} run
 * @param {RunQuery} q
 */
export function runMatches(run, q) {
  if (q.type && run.type !== q.type) return false;
  if (q.name && run.name !== q.name) return false;
  if (q.status && run.status !== q.status) return false;
  if (q.reason && run.problem?.reason !== q.reason) return false;
  const started = ms(run.started_at);
  const since = ms(q.since);
  const until = ms(q.until);
  if (since !== null && (started === null || started < since)) return false;
  if (until !== null && (started === null || started >= until)) return false;
  return true;
}

/**
 * What an event of the log means for the list of `q`: `ignore` (not about a run the list may
 * hold), `remove` (the run now fails the filters: its status or reason changed), or `check`
 * (read the run, then add, update or remove it).
 * @param {{ type: string, run_id?: string, subject?: string, data?: any }} event
 * @param {RunQuery} q
 * @returns {'ignore' | 'remove' | 'check'}
 */
export function eventVerdict(event, q) {
  const status = RUN_FACTS[event.type];
  if (!status || !event.run_id) return 'ignore';
  if (typeof event.subject === 'string' && event.subject.includes('/')) {
    const slash = event.subject.indexOf('/');
    const type = event.subject.slice(0, slash);
    const name = event.subject.slice(slash + 1);
    // A run's definition never changes: one of another definition was never in the list.
    if ((q.type && type !== q.type) || (q.name && name !== q.name)) return 'ignore';
  }
  if (q.status && status !== q.status) return 'remove';
  if (q.reason) {
    if (status === 'started' || status === 'succeeded') return 'remove';
    const reason = event.data && typeof event.data === 'object' ? event.data.reason : undefined;
    if (typeof reason === 'string' && reason !== q.reason) return 'remove';
  }
  return 'check';
}

/**
 * Newest first, as list_runs orders them: by started_at, then run_id, both descending.
 * @param {RunLike} a
 * @param {RunLike} b
 */
export function compareRuns(a, b) {
  const ta = ms(a.started_at) ?? 0;
  const tb = ms(b.started_at) ?? 0;
  if (ta !== tb) return tb - ta;
  return a.run_id < b.run_id ? 1 : a.run_id > b.run_id ? -1 : 0;
}

/**
 * The list with `runs` merged in by run_id (the newer copy wins) and `gone` taken out, in order.
 * @template {RunLike} R
 * @param {R[]} list
 * @param {R[]} runs
 * @param {Iterable<string>} [gone]
 * @returns {R[]}
 */
export function mergeRuns(list, runs, gone = []) {
  const byId = new Map(list.map((r) => [r.run_id, r]));
  for (const r of runs) byId.set(r.run_id, r);
  for (const id of gone) byId.delete(id);
  return [...byId.values()].sort(compareRuns);
}

/**
 * A time for a `datetime-local` input (local time, to the minute) from RFC 3339, and back.
 * @param {string} iso
 */
export function toLocalInput(iso) {
  const t = ms(iso);
  if (t === null) return '';
  const d = new Date(t);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** @param {string} local */
export function fromLocalInput(local) {
  if (!local) return '';
  const t = new Date(local).getTime();
  return Number.isFinite(t) ? new Date(t).toISOString().replace(/\.000Z$/, 'Z') : '';
}
