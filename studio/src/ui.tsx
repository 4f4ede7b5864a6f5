import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
import { ApiError, type Problem, type Issue } from './api';
import { renderMarkdown } from './markdown';
import { renderMermaid, nodeIdOf } from './mermaid';
import { json } from './format';

const TONES: Record<string, string> = {
  succeeded: 'ok', done: 'ok', active: 'ok', answered: 'ok', valid: 'ok', live: 'ok',
  failed: 'bad', rejected: 'bad', invalid: 'bad', undelivered: 'bad',
  started: 'info', running: 'info', open: 'info', connecting: 'info',
  waiting: 'warn', reconnecting: 'warn', expired: 'warn',
  skipped: 'muted', pending: 'muted', retired: 'muted', cancelled: 'muted', off: 'muted', unavailable: 'muted',
};

export function tone(status: string): string {
  return TONES[status] || 'muted';
}

/** A status with colour and words, never colour alone. */
export function StatusPill({ status, label }: { status: string; label?: string }) {
  return (
    <span class={`pill pill-${tone(status)}`} data-status={status}>
      <span class="dot" aria-hidden="true" />
      {label || status}
    </span>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return <p class="muted" role="status">{what}…</p>;
}

export function problemOf(error: unknown): Problem {
  if (error instanceof ApiError) return error.problem;
  return { title: 'Something went wrong', detail: String((error as Error)?.message || error) };
}

export function ProblemView({ problem, title }: { problem: Problem; title?: string }) {
  return (
    <div class="problem" role="alert">
      <p class="problem-title">
        <strong>{title || problem.title || 'Refused'}</strong>
        {problem.reason && <span class="tag">{problem.reason}{problem.kind ? ` · ${problem.kind}` : ''}{problem.because ? ` · ${problem.because}` : ''}</span>}
      </p>
      {problem.detail && problem.detail !== problem.title && <p>{problem.detail}</p>}
      {problem.issues && problem.issues.length > 0 && (
        <ul class="issues">
          {problem.issues.map((i, n) => <li key={n}>{i.message}</li>)}
        </ul>
      )}
    </div>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  return <ProblemView problem={problemOf(error)} />;
}

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  setData: (d: T) => void;
}

/** Loads with `fn` whenever `deps` change; `reload` loads again without clearing. */
export function useAsync<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const depsKey = JSON.stringify(deps);
  const lastKey = useRef<string | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    const fresh = lastKey.current !== depsKey;
    lastKey.current = depsKey;
    if (fresh) setState({ data: undefined, error: null, loading: true });
    fnRef.current(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, error: null, loading: false }),
      (error) => !controller.signal.aborted && (error as Error)?.name !== 'AbortError' && setState((s) => ({ data: fresh ? undefined : s.data, error, loading: false })),
    );
    return () => controller.abort();
  }, [depsKey, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((data: T) => setState({ data, error: null, loading: false }), []);
  return { ...state, reload, setData };
}

/** Calls fn at most once per `ms`, trailing. */
export function useThrottled(fn: () => void, ms: number): () => void {
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const timer = useRef<number | null>(null);
  useEffect(() => () => { if (timer.current) clearTimeout(timer.current); }, []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      fnRef.current();
    }, ms);
  }, [ms]);
}

export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  if (value === undefined) return <p class="muted">—</p>;
  return <pre class="json" tabIndex={0} aria-label={label || 'JSON'}>{json(value)}</pre>;
}

/** Markdown rendered and sanitised; ```mermaid blocks drawn as diagrams. */
export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const html = renderMarkdown(text);
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    const blocks = [...root.querySelectorAll('code.language-mermaid')];
    for (const code of blocks) {
      const pre = code.parentElement!;
      const source = code.textContent || '';
      const holder = document.createElement('div');
      holder.className = 'diagram';
      holder.setAttribute('role', 'img');
      holder.setAttribute('aria-label', 'Diagram');
      pre.replaceWith(holder);
      renderMermaid(source).then(
        ({ svg }) => { holder.innerHTML = svg; },
        () => { holder.replaceWith(pre); },
      );
    }
  }, [html]);
  return <div ref={ref} class={`markdown ${cls || ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}

export const STATE_WORDS: Record<string, string> = {
  done: 'done', failed: 'failed', running: 'running', waiting: 'waiting', skipped: 'skipped', pending: 'not reached yet',
};

/**
 * A Mermaid diagram; with `states`, each node whose id is a key is coloured by its state (and
 * its state is named in its title, for assistive technology and on hover).
 */
export function Mermaid({ source, states, label }: { source: string; states?: Map<string, string>; label?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [rendered, setRendered] = useState<{ id: string; source: string } | null>(null);
  useEffect(() => {
    let cancelled = false;
    setError(null);
    renderMermaid(source).then(
      ({ svg, id }) => {
        if (cancelled || !ref.current) return;
        ref.current.innerHTML = svg;
        setRendered({ id, source });
      },
      (e) => !cancelled && setError(String(e?.message || e)),
    );
    return () => { cancelled = true; };
  }, [source]);
  useEffect(() => {
    const root = ref.current;
    if (!root || !rendered || !states) return;
    for (const el of root.querySelectorAll('g.node, g.cluster')) {
      const id = nodeIdOf(el, rendered.id);
      if (!id) continue;
      const state = states.get(id);
      for (const c of [...el.classList]) if (c.startsWith('task-')) el.classList.remove(c);
      el.querySelector(':scope > title.task-state')?.remove();
      if (state) {
        el.classList.add(`task-${state}`);
        el.setAttribute('data-task-state', state);
        el.setAttribute('data-node', id);
        const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
        title.classList.add('task-state');
        title.textContent = STATE_WORDS[state] || state;
        el.prepend(title);
      }
    }
  }, [rendered, states]);
  return (
    <div class="diagram-wrap">
      {error && <p class="problem" role="alert">The diagram cannot be drawn: {error}</p>}
      <div ref={ref} class="diagram" role="img" aria-label={label || 'Diagram'} />
    </div>
  );
}

export function Legend() {
  return (
    <ul class="legend" aria-label="What the colours mean">
      {['done', 'running', 'waiting', 'failed', 'skipped', 'pending'].map((s) => (
        <li key={s}><span class={`swatch task-swatch-${s}`} aria-hidden="true" />{STATE_WORDS[s]}</li>
      ))}
    </ul>
  );
}

/** A document with line numbers; issues shown at their lines. */
export function SourceView({ source, issues }: { source: string; issues?: Issue[] }) {
  const lines = source.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const byLine = new Map<number, string[]>();
  for (const i of issues || []) if (i.line) byLine.set(i.line, [...(byLine.get(i.line) || []), i.message]);
  return (
    <div class="source" tabIndex={0} role="region" aria-label="The document, with line numbers">
      <table>
        <tbody>
          {lines.map((l, n) => (
            <tr key={n} class={byLine.has(n + 1) ? 'has-issue' : ''} id={`L${n + 1}`}>
              <td class="ln" aria-hidden="true">{n + 1}</td>
              <td class="code">
                <code>{l || ' '}</code>
                {byLine.get(n + 1)?.map((m, k) => <div key={k} class="line-issue">{m}</div>)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Tabs({ tabs, current, hrefOf }: { tabs: Array<[string, string]>; current: string; hrefOf: (id: string) => string }) {
  return (
    <nav class="tabs" aria-label="Sections">
      {tabs.map(([id, label]) => (
        <a key={id} href={hrefOf(id)} aria-current={id === current ? 'page' : undefined} class={id === current ? 'active' : ''}>{label}</a>
      ))}
    </nav>
  );
}

export function Section({ title, children, actions, id }: { title: string; children: ComponentChildren; actions?: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-labelledby={id ? `${id}-h` : undefined}>
      <div class="card-head">
        <h2 id={id ? `${id}-h` : undefined}>{title}</h2>
        {actions && <div class="actions">{actions}</div>}
      </div>
      {children}
    </section>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/**
 * What a page says when the caller's role may not do what it is for (a start-run or edit page
 * opened directly by a viewer): a clear sentence, and the way back.
 */
export function RoleRefusal({ title, role, what, needs, back, backLabel }: { title: string; role?: string; what: string; needs: string; back: string; backLabel: string }) {
  return (
    <div class="page">
      <header class="page-head"><div><h1>{title}</h1></div></header>
      <div class="card role-refusal" role="alert" data-refused={what}>
        <p><strong>Your role{role ? `, ${role},` : ''} cannot {what}.</strong> That needs the role {needs}; ask an admin of the org for such a key.</p>
        <p><a href={back}>{backLabel}</a></p>
      </div>
    </div>
  );
}
