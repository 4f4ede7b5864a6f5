import { useEffect, useState } from 'preact/hooks';
import { diffLines } from 'diff';
import { api, get, defPath, pbPath, qs, type Definition, type Run } from '../api';
import { useStore } from '../store';
import { pbHref, href, navigate } from '../router';
import { meStore, can } from '../session';
import { subscribe, useLiveListing } from '../live';
import { mermaidBlock } from '../lib/workflow.js';
import { ErrorBox, Loading, StatusPill, useAsync, useThrottled, Markdown, Mermaid, SourceView, Tabs, Empty, JsonBlock, Section } from '../ui';
import { when, ago } from '../format';

export const TYPES = ['workflow', 'reasoning', 'interaction', 'computation', 'recall', 'prediction'];

function warningText(w: unknown): string {
  if (typeof w === 'string') return w;
  if (w && typeof w === 'object' && 'message' in (w as any)) return String((w as any).message);
  return JSON.stringify(w);
}

export function DefinitionsPage({ org, pb, query }: { org: string; pb: string; query: URLSearchParams }) {
  const me = useStore(meStore);
  const type = query.get('type') || '';
  const showRetired = query.get('retired') === '1';
  const list = useLiveListing(org, pb, (signal) => get<{ definitions: Definition[] }>(`${pbPath(org, pb)}/definitions${qs({ type })}`, signal), [type], (e) => e.type.startsWith('definition_'), 500);
  const defs = (list.data?.definitions || []).filter((d) => showRetired || d.status !== 'retired');
  const retired = (list.data?.definitions || []).filter((d) => d.status === 'retired').length;
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={href([])}>Playbooks</a> / {org} / {pb}</p>
          <h1>Definitions</h1>
        </div>
        {can(me, 'edit') && <a class="button primary" href={pbHref(org, pb, 'definitions', 'new')}>New definition</a>}
      </header>
      <div class="filters" role="group" aria-label="Filter the definitions">
        <div class="field">
          <label for="def-type">Type</label>
          <select id="def-type" value={type} onChange={(e) => navigate(href(['orgs', org, 'playbooks', pb, 'definitions'], { type: (e.target as HTMLSelectElement).value, retired: showRetired ? '1' : '' }))}>
            <option value="">All types</option>
            {TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </div>
        <div class="field check">
          <label><input type="checkbox" checked={showRetired} onChange={(e) => navigate(href(['orgs', org, 'playbooks', pb, 'definitions'], { type, retired: (e.target as HTMLInputElement).checked ? '1' : '' }))} /> Show retired ({retired})</label>
        </div>
      </div>
      {list.error ? <ErrorBox error={list.error} /> : null}
      {list.loading && !list.data && <Loading />}
      {list.data && defs.length === 0 && <Empty>No definition here yet.</Empty>}
      {TYPES.map((t) => {
        const ofType = defs.filter((d) => d.type === t);
        if (ofType.length === 0) return null;
        return (
          <section class="card" key={t} aria-labelledby={`type-${t}`}>
            <h2 id={`type-${t}`} class="type-head"><span class={`type-badge type-${t}`}>{t}</span> {ofType.length}</h2>
            <table class="list">
              <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Warnings</th><th scope="col">Updated</th></tr></thead>
              <tbody>
                {ofType.map((d) => (
                  <tr key={d.name}>
                    <td><a href={pbHref(org, pb, 'definitions', d.type, d.name)}>{d.name}</a></td>
                    <td class="desc">{d.description || <span class="muted">—</span>}</td>
                    <td><StatusPill status={d.status} /></td>
                    <td>v{d.version}</td>
                    <td>{d.warnings?.length ? <span class="warn-count" title={d.warnings.map(warningText).join('\n')}>{d.warnings.length} warning{d.warnings.length > 1 ? 's' : ''}</span> : <span class="muted">none</span>}</td>
                    <td title={when(d.updated_at)}>{ago(d.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        );
      })}
    </div>
  );
}

const TABS: Array<[string, string]> = [['overview', 'Overview'], ['diagram', 'Diagram'], ['document', 'Document'], ['versions', 'Versions'], ['used', 'Used by'], ['runs', 'Runs']];

export function DefinitionPage({ org, pb, type, name, query }: { org: string; pb: string; type: string; name: string; query: URLSearchParams }) {
  const me = useStore(meStore);
  const tab = query.get('tab') || 'overview';
  const version = query.get('version') || '';
  const def = useAsync((signal) => get<Definition>(`${defPath(org, pb, type, name)}${qs({ version })}`, signal), [org, pb, type, name, version]);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);
  const refresh = useThrottled(def.reload, 300);
  useEffect(() => subscribe(org, pb, (e) => { if (e.type.startsWith('definition_') && e.subject === `${type}/${name}`) refresh(); }), [org, pb, type, name]);
  const d = def.data;
  const hrefOf = (t: string) => href(['orgs', org, 'playbooks', pb, 'definitions', type, name], { tab: t, version });
  const retire = async () => {
    if (!confirm(`Retire ${type} ${name}? It runs no more and takes no updates. This cannot be undone.`)) return;
    setBusy(true);
    setActionError(null);
    try { def.setData(await api('DELETE', defPath(org, pb, type, name))); } catch (e) { setActionError(e); } finally { setBusy(false); }
  };
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <p class="crumbs"><a href={pbHref(org, pb, 'definitions')}>Definitions</a> / {type}</p>
          <h1><span class={`type-badge type-${type}`}>{type}</span> {name}</h1>
          {d && (
            <p class="meta">
              <StatusPill status={d.status} /> <span>version {d.version}{version ? ' (an earlier version)' : ''}</span>
              <span class="muted">updated {when(d.updated_at)}</span>
            </p>
          )}
        </div>
        {d && (
          <div class="actions">
            {can(me, 'run') && d.status === 'active' && !version && <a class="button primary" href={pbHref(org, pb, 'definitions', type, name, 'run')}>Run</a>}
            {can(me, 'edit') && d.status === 'active' && !version && <a class="button" href={pbHref(org, pb, 'definitions', type, name, 'edit')}>Edit</a>}
            {can(me, 'edit') && d.status === 'active' && !version && <button type="button" class="danger" disabled={busy} onClick={retire}>Retire</button>}
          </div>
        )}
      </header>
      {actionError ? <ErrorBox error={actionError} /> : null}
      {def.error ? <ErrorBox error={def.error} /> : null}
      {!d && def.loading && <Loading />}
      {d && (
        <>
          {d.description && <p class="lead">{d.description}</p>}
          {d.warnings && d.warnings.length > 0 && (
            <div class="warnings" role="note">
              <strong>Warnings</strong>
              <ul>{d.warnings.map((w, i) => <li key={i}>{warningText(w)}</li>)}</ul>
            </div>
          )}
          <Tabs tabs={TABS} current={tab} hrefOf={hrefOf} />
          <div class="tab-body">
            {tab === 'overview' && (d.overview ? <div class="card"><Markdown text={d.overview} /></div> : <Empty>This definition has no overview.</Empty>)}
            {tab === 'diagram' && <DiagramTab d={d} />}
            {tab === 'document' && (
              <>
                <Section title="Document"><SourceView source={d.source} /></Section>
                <div class="grid2">
                  <Section title="Input schema"><JsonBlock value={d.input_schema} label="Input schema" /></Section>
                  <Section title="Output schema"><JsonBlock value={d.output_schema} label="Output schema" /></Section>
                </div>
                {d.triggers && d.triggers.length > 0 && <Section title="Triggers"><JsonBlock value={d.triggers} label="Triggers" /><p class="muted">Since {d.triggers_since || '—'}</p></Section>}
              </>
            )}
            {tab === 'versions' && <VersionsTab org={org} pb={pb} type={type} name={name} />}
            {tab === 'used' && (
              <Section title="Used by">
                {d.used_by && d.used_by.length > 0 ? (
                  <ul class="plain">
                    {d.used_by.map((u) => {
                      const [t, n] = u.includes('/') ? u.split('/') : ['workflow', u];
                      return <li key={u}><a href={pbHref(org, pb, 'definitions', t, n)}>{u}</a></li>;
                    })}
                  </ul>
                ) : <Empty>No definition uses it.</Empty>}
              </Section>
            )}
            {tab === 'runs' && <DefinitionRuns org={org} pb={pb} type={type} name={name} />}
          </div>
        </>
      )}
    </div>
  );
}

function DiagramTab({ d }: { d: Definition }) {
  const generated = d.type === 'workflow' ? mermaidBlock(d.overview) : null;
  const own = d.diagram && d.diagram.trim() !== 'none' ? d.diagram : null;
  if (!own && !generated) return <Empty>This definition has no diagram.</Empty>;
  return (
    <>
      {own && <Section title="Diagram"><Mermaid source={own} label={`Diagram of ${d.name}`} /></Section>}
      {generated && <Section title="Flowchart of its steps"><Mermaid source={generated} label={`Flowchart of the steps of ${d.name}`} /></Section>}
    </>
  );
}

interface Version { version: number; status?: string; source: string; diagram: string; overview: string | null; created_at: string }

function VersionsTab({ org, pb, type, name }: { org: string; pb: string; type: string; name: string }) {
  const versions = useAsync((signal) => get<{ versions: Version[] }>(`${defPath(org, pb, type, name)}/versions`, signal), [org, pb, type, name]);
  const list = versions.data?.versions || [];
  const [a, setA] = useState<number | null>(null);
  const [b, setB] = useState<number | null>(null);
  const [what, setWhat] = useState<'source' | 'diagram' | 'overview'>('source');
  if (versions.error) return <ErrorBox error={versions.error} />;
  if (!versions.data) return <Loading />;
  const last = list.length ? list[list.length - 1].version : 0;
  const va = list.find((v) => v.version === (a ?? Math.max(1, last - 1)));
  const vb = list.find((v) => v.version === (b ?? last));
  return (
    <>
      <Section title="Versions">
        <table class="list">
          <thead><tr><th scope="col">Version</th><th scope="col">Saved</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Open</span></th></tr></thead>
          <tbody>
            {[...list].reverse().map((v) => (
              <tr key={v.version}>
                <td>v{v.version}</td>
                <td>{when(v.created_at)}</td>
                <td>{v.status ? <StatusPill status={v.status} /> : '—'}</td>
                <td><a href={href(['orgs', org, 'playbooks', pb, 'definitions', type, name], { tab: 'document', version: v.version === last ? '' : String(v.version) })}>View</a></td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Compare two versions">
        <div class="filters">
          <div class="field"><label for="diff-a">From</label>
            <select id="diff-a" value={String(va?.version ?? '')} onChange={(e) => setA(Number((e.target as HTMLSelectElement).value))}>{list.map((v) => <option key={v.version} value={v.version}>v{v.version}</option>)}</select></div>
          <div class="field"><label for="diff-b">To</label>
            <select id="diff-b" value={String(vb?.version ?? '')} onChange={(e) => setB(Number((e.target as HTMLSelectElement).value))}>{list.map((v) => <option key={v.version} value={v.version}>v{v.version}</option>)}</select></div>
          <div class="field"><label for="diff-what">Compare</label>
            <select id="diff-what" value={what} onChange={(e) => setWhat((e.target as HTMLSelectElement).value as any)}>
              <option value="source">the document</option><option value="diagram">the diagram</option><option value="overview">the overview</option>
            </select></div>
        </div>
        {va && vb ? <DiffView a={va[what] || ''} b={vb[what] || ''} /> : <Empty>Pick two versions.</Empty>}
      </Section>
    </>
  );
}

export function DiffView({ a, b }: { a: string; b: string }) {
  if (a === b) return <Empty>They are the same.</Empty>;
  const parts = diffLines(a, b);
  let la = 0;
  let lb = 0;
  const rows: Array<{ kind: string; la: number | ''; lb: number | ''; text: string }> = [];
  for (const p of parts) {
    const lines = p.value.replace(/\n$/, '').split('\n');
    for (const text of lines) {
      if (p.added) rows.push({ kind: 'add', la: '', lb: ++lb, text });
      else if (p.removed) rows.push({ kind: 'del', la: ++la, lb: '', text });
      else rows.push({ kind: 'same', la: ++la, lb: ++lb, text });
    }
  }
  const added = rows.filter((r) => r.kind === 'add').length;
  const removed = rows.filter((r) => r.kind === 'del').length;
  return (
    <div class="diff" tabIndex={0} role="region" aria-label={`Differences: ${added} lines added, ${removed} removed`}>
      <p class="muted small">{added} line{added === 1 ? '' : 's'} added, {removed} removed</p>
      <table>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i} class={`diff-${r.kind}`}>
              <td class="ln" aria-hidden="true">{r.la}</td>
              <td class="ln" aria-hidden="true">{r.lb}</td>
              <td class="mark">{r.kind === 'add' ? <><span aria-hidden="true">+</span><span class="sr-only">added</span></> : r.kind === 'del' ? <><span aria-hidden="true">−</span><span class="sr-only">removed</span></> : ''}</td>
              <td class="code"><code>{r.text || ' '}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DefinitionRuns({ org, pb, type, name }: { org: string; pb: string; type: string; name: string }) {
  const runs = useAsync((signal) => get<{ runs: Run[] }>(`${pbPath(org, pb)}/runs${qs({ type, name, limit: 20 })}`, signal), [org, pb, type, name]);
  if (runs.error) return <ErrorBox error={runs.error} />;
  if (!runs.data) return <Loading />;
  return (
    <Section title="Recent runs" actions={<a href={href(['orgs', org, 'playbooks', pb, 'runs'], { type, name })}>All runs of {name}</a>}>
      {runs.data.runs.length === 0 ? <Empty>It has not run yet.</Empty> : (
        <table class="list">
          <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Started</th></tr></thead>
          <tbody>{runs.data.runs.map((r) => (
            <tr key={r.run_id}><td><a class="mono" href={pbHref(org, pb, 'runs', r.run_id)}>{r.run_id}</a></td><td><StatusPill status={r.status} /></td><td>v{r.definition_version}</td><td>{when(r.started_at)}</td></tr>
          ))}</tbody>
        </table>
      )}
    </Section>
  );
}
