import { useEffect, useRef, useState } from 'preact/hooks';
import { EditorView, basicSetup } from 'codemirror';
import { EditorState, Compartment } from '@codemirror/state';
import { yaml } from '@codemirror/lang-yaml';
import { markdown } from '@codemirror/lang-markdown';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { api, get, defPath, pbPath, ApiError, type CheckResult, type Definition, type Issue } from '../api';
import { useStore } from '../store';
import { pbHref, navigate } from '../router';
import { meStore, can } from '../session';
import { ErrorBox, Loading, StatusPill, JsonBlock, problemOf, RoleRefusal } from '../ui';
import { TYPES } from './definitions';

const TEMPLATES: Record<string, string> = {
  workflow: `document:
  dsl: '1.0.3'
  namespace: my-playbook
  name: my-workflow
  version: '1.0.0'
  summary: What this workflow does
input:
  schema:
    document:
      type: object
      properties:
        month: { type: string }
do:
  - pause:
      wait: PT1S
`,
  reasoning: `---
description: What this function decides
model: anthropic/claude-sonnet-4-5
input:
  schema:
    type: object
    required: [text]
    properties:
      text: { type: string }
---
Summarise this text in one sentence:

{{ input.text }}
`,
  interaction: `---
description: Asks a person to approve something
to: '{{ input.owner }}'
expires: P2D
input:
  schema:
    type: object
    required: [owner]
    properties:
      owner: { type: string }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Please approve, or ask for a revision.
`,
  computation: `---
description: What this computes
input:
  schema:
    type: object
    required: [n]
    properties:
      n: { type: integer }
output:
  schema:
    type: object
    required: [double]
    properties:
      double: { type: integer }
---
Doubles a number.

\`\`\`ts
export default function (input: { n: number }) {
  return { double: input.n * 2 };
}
\`\`\`
`,
  recall: `---
description: Counts events by type
events: [com.example.thing.happened]
output:
  shape: categories
---
\`\`\`ts
export const initial = {};
export function fold(view: Record<string, number>, event: { type: string }) {
  return { ...view, [event.type]: (view[event.type] || 0) + 1 };
}
export function answer(view: Record<string, number>) {
  return { categories: Object.entries(view).map(([name, value]) => ({ name, value })) };
}
\`\`\`
`,
  prediction: `---
description: Forecasts a monthly series
source:
  recall: orders-by-month
horizon: 12
period: P1M
---
Forecasts the next year of orders.
`,
};

function issueKey(i: Issue) {
  return `${i.line ?? ''}:${i.column ?? ''}:${i.message}`;
}

export function EditorPage({ org, pb, type: typeParam, name: nameParam }: { org: string; pb: string; type?: string; name?: string }) {
  const me = useStore(meStore);
  const editing = !!(typeParam && nameParam);
  const [type, setType] = useState(typeParam || 'workflow');
  const [name, setName] = useState(nameParam || '');
  const [diagram, setDiagram] = useState('none');
  const [overview, setOverview] = useState('');
  const [source, setSource] = useState<string | null>(editing ? null : TEMPLATES[typeParam || 'workflow']);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [original, setOriginal] = useState<Definition | null>(null);
  const [check, setCheck] = useState<{ state: 'idle' | 'checking' | 'done' | 'error'; result?: CheckResult; error?: unknown }>({ state: 'idle' });
  const [saveError, setSaveError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const viewRef = useRef<EditorView | null>(null);
  const allowed = can(me, 'edit');

  useEffect(() => {
    if (!editing || !allowed) return;
    get<Definition>(defPath(org, pb, typeParam!, nameParam!)).then((d) => {
      setOriginal(d);
      setSource(d.source);
      setDiagram(d.diagram || 'none');
      setOverview(d.type === 'workflow' ? '' : d.overview || '');
    }, setLoadError);
  }, [org, pb, typeParam, nameParam, allowed]);

  // Check as one types: 400 ms after the last change, through check_definition (saves nothing).
  useEffect(() => {
    if (source === null || !allowed) return;
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      setCheck((c) => ({ ...c, state: 'checking' }));
      try {
        const body: any = { type, name: name || 'untitled', source, diagram: diagram || 'none' };
        if (type !== 'workflow' && overview.trim()) body.overview = overview;
        const result = await api<CheckResult>('POST', `${pbPath(org, pb)}/definitions/check`, body, controller.signal);
        setCheck({ state: 'done', result });
      } catch (error) {
        if ((error as Error).name === 'AbortError') return;
        // A 422 (a bad name or diagram) carries issues too: show them as a check would.
        if (error instanceof ApiError && error.status === 422) {
          setCheck({ state: 'done', result: { valid: false, issues: error.problem.issues || [], warnings: [], input_schema: null, output_schema: null } });
        } else setCheck({ state: 'error', error });
      }
    }, 400);
    return () => { clearTimeout(timer); controller.abort(); };
  }, [source, type, name, diagram, overview, allowed]);

  const issues = check.result?.issues || [];
  const saveIssues = saveError instanceof ApiError ? saveError.problem.issues || [] : [];
  const shown = [...issues];
  for (const i of saveIssues) if (!shown.some((s) => issueKey(s) === issueKey(i))) shown.push(i);

  // Issues at their lines, as lint markers in the gutter and under the text.
  useEffect(() => {
    const view = viewRef.current;
    if (!view) return;
    const doc = view.state.doc;
    const diagnostics: Diagnostic[] = [];
    for (const i of shown) {
      if (!i.line || (i.pointer && i.pointer !== '/source')) continue;
      const lineNo = Math.min(Math.max(1, i.line), doc.lines);
      const line = doc.line(lineNo);
      const from = Math.min(line.to, line.from + Math.max(0, (i.column || 1) - 1));
      diagnostics.push({ from, to: Math.max(from, line.to), severity: 'error', message: i.message });
    }
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }, [JSON.stringify(shown), viewRef.current]);

  const save = async () => {
    if (source === null) return;
    setSaving(true);
    setSaveError(null);
    try {
      let saved: Definition;
      if (editing) {
        const body: any = { source, diagram: diagram || 'none' };
        if (type !== 'workflow') body.overview = overview.trim() ? overview : null;
        saved = await api<Definition>('PUT', defPath(org, pb, type, name), body);
      } else {
        const body: any = { type, name, source, diagram: diagram || 'none' };
        if (type !== 'workflow' && overview.trim()) body.overview = overview;
        saved = await api<Definition>('POST', `${pbPath(org, pb)}/definitions`, body);
      }
      navigate(pbHref(org, pb, 'definitions', saved.type, saved.name));
    } catch (e) {
      setSaveError(e);
    } finally {
      setSaving(false);
    }
  };

  const goTo = (line: number) => {
    const view = viewRef.current;
    if (!view) return;
    const l = view.state.doc.line(Math.min(Math.max(1, line), view.state.doc.lines));
    view.dispatch({ selection: { anchor: l.from }, scrollIntoView: true });
    view.focus();
  };

  if (!allowed) return <RoleRefusal title={editing ? `Edit ${typeParam} ${nameParam}` : 'New definition'} role={me?.role} what="edit definitions" needs="editor or admin" back={editing ? pbHref(org, pb, 'definitions', typeParam!, nameParam!) : pbHref(org, pb, 'definitions')} backLabel={editing ? `Back to ${typeParam} ${nameParam}` : 'Back to the definitions'} />;
  if (loadError) return <ErrorBox error={loadError} />;
  if (source === null) return <Loading />;
  const result = check.result;
  return (
    <div class="page editor-page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={pbHref(org, pb, 'definitions')}>Definitions</a>{editing && <> / <a href={pbHref(org, pb, 'definitions', type, name)}>{name}</a></>}</p>
          <h1>{editing ? `Edit ${type} ${name}` : 'New definition'}</h1>
          {original && <p class="meta muted">Saving makes version {original.version + 1}; an unchanged document makes none.</p>}
        </div>
        <div class="actions">
          <span class="check-state" role="status" aria-live="polite" data-check={check.state === 'done' ? (result?.valid ? 'valid' : 'invalid') : check.state}>
            {check.state === 'checking' && <StatusPill status="running" label="Checking…" />}
            {check.state === 'done' && (result?.valid ? <StatusPill status="valid" label="Valid" /> : <StatusPill status="invalid" label={`${result?.issues.length || 0} issue${result?.issues.length === 1 ? '' : 's'}`} />)}
            {check.state === 'error' && <StatusPill status="unavailable" label="Not checked" />}
          </span>
          <button type="button" class="primary" onClick={save} disabled={saving}>{saving ? 'Saving…' : editing ? 'Save a new version' : 'Create'}</button>
        </div>
      </header>
      {!editing && (
        <div class="filters">
          <div class="field">
            <label for="ed-type">Type</label>
            <select id="ed-type" value={type} onChange={(e) => {
              const t = (e.target as HTMLSelectElement).value;
              if (source === TEMPLATES[type]) { setSource(TEMPLATES[t]); viewRef.current?.dispatch({ changes: { from: 0, to: viewRef.current.state.doc.length, insert: TEMPLATES[t] } }); }
              setType(t);
            }}>
              {TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
            </select>
          </div>
          <div class="field">
            <label for="ed-name">Name</label>
            <input id="ed-name" value={name} placeholder="review-brief" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </div>
        </div>
      )}
      {saveError ? <ErrorBox error={saveError} /> : null}
      {check.state === 'error' && <ErrorBox error={check.error} />}
      <div class="editor-grid">
        <div>
          <CodeEditor key={type} doc={source} type={type} onChange={setSource} onView={(v) => { viewRef.current = v; }} />
          <div class="field">
            <label for="ed-diagram">Diagram (Mermaid: flowchart, graph or stateDiagram; or the word none)</label>
            <textarea id="ed-diagram" class="mono" rows={4} value={diagram} onInput={(e) => setDiagram((e.target as HTMLTextAreaElement).value)} />
          </div>
          {type !== 'workflow' ? (
            <div class="field">
              <label for="ed-overview">Overview (Markdown, optional)</label>
              <textarea id="ed-overview" rows={5} value={overview} onInput={(e) => setOverview((e.target as HTMLTextAreaElement).value)} />
            </div>
          ) : <p class="muted small">A workflow's overview is written by the runtime from its document.</p>}
        </div>
        <aside class="card side" aria-labelledby="issues-h">
          <h2 id="issues-h">Check</h2>
          {shown.length === 0 && check.state === 'done' && <p>No issues.</p>}
          {shown.length > 0 && (
            <ul class="issue-list">
              {shown.map((i, n) => (
                <li key={n} data-line={i.line ?? ''}>
                  {i.line ? <button type="button" class="link" onClick={() => goTo(i.line!)}>Line {i.line}{i.column ? `:${i.column}` : ''}</button> : <span class="tag">{i.pointer || 'document'}</span>}
                  <span> {i.line ? i.message.replace(/^Line \d+(, column \d+)?[,:]\s*/, '') : i.message}</span>
                </li>
              ))}
            </ul>
          )}
          {result && result.warnings && result.warnings.length > 0 && (
            <>
              <h3>Warnings</h3>
              <ul class="issue-list">{result.warnings.map((w, n) => <li key={n}>{typeof w === 'string' ? w : w.message}</li>)}</ul>
            </>
          )}
          {result?.input_schema ? <details><summary>Input schema</summary><JsonBlock value={result.input_schema} label="Input schema" /></details> : null}
          {result?.output_schema ? <details><summary>Output schema</summary><JsonBlock value={result.output_schema} label="Output schema" /></details> : null}
          {saveError && !(saveError instanceof ApiError && saveError.status === 422) ? <p class="muted">{problemOf(saveError).detail}</p> : null}
        </aside>
      </div>
    </div>
  );
}

function CodeEditor({ doc, type, onChange, onView }: { doc: string; type: string; onChange: (s: string) => void; onView: (v: EditorView) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const change = useRef(onChange);
  change.current = onChange;
  useEffect(() => {
    const language = new Compartment();
    const view = new EditorView({
      parent: ref.current!,
      state: EditorState.create({
        doc,
        extensions: [
          basicSetup,
          language.of(type === 'workflow' ? yaml() : markdown()),
          lintGutter(),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': `The document of the ${type} function` }),
          EditorView.updateListener.of((u) => { if (u.docChanged) change.current(u.state.doc.toString()); }),
        ],
      }),
    });
    onView(view);
    return () => view.destroy();
  }, []);
  return <div ref={ref} class="code-editor" data-language={type === 'workflow' ? 'yaml' : 'markdown'} />;
}
