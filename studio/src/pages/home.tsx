import { useState } from 'preact/hooks';
import { api, type Playbook } from '../api';
import { useStore } from '../store';
import { pbHref } from '../router';
import { meStore, playbooksStore, loadPlaybooks, can } from '../session';
import { ErrorBox, Empty, Loading } from '../ui';
import { when } from '../format';

export function Home() {
  const playbooks = useStore(playbooksStore);
  const me = useStore(meStore);
  if (!playbooks) return <Loading what="Loading the playbooks" />;
  const byOrg = new Map<string, Playbook[]>();
  for (const p of playbooks) byOrg.set(p.org, [...(byOrg.get(p.org) || []), p]);
  return (
    <div class="page">
      <header class="page-head">
        <h1>Playbooks</h1>
        <p class="muted">Every playbook of the orgs your key reaches.</p>
      </header>
      {byOrg.size === 0 && <Empty>No playbook yet.{can(me, 'admin') ? ' Create an org and a playbook below.' : ''}</Empty>}
      {[...byOrg].map(([org, list]) => (
        <section class="card" key={org} aria-labelledby={`org-${org}`}>
          <h2 id={`org-${org}`}>Org {org}</h2>
          <table class="list">
            <thead><tr><th scope="col">Playbook</th><th scope="col">Title</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Go to</span></th></tr></thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id}>
                  <td><a href={pbHref(p.org, p.id, 'definitions')}>{p.id}</a></td>
                  <td>{p.title || '—'}</td>
                  <td>{when(p.created_at)}</td>
                  <td class="row-links"><a href={pbHref(p.org, p.id, 'runs')}>Runs</a> · <a href={pbHref(p.org, p.id, 'inbox')}>Inbox</a> · <a href={pbHref(p.org, p.id, 'events')}>Events</a></td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
      {can(me, 'admin') && <CreateForms orgs={[...byOrg.keys()]} />}
    </div>
  );
}

function CreateForms({ orgs }: { orgs: string[] }) {
  const me = useStore(meStore);
  const [orgId, setOrgId] = useState('');
  const [pbOrg, setPbOrg] = useState(orgs[0] || me?.org || '');
  const [pbId, setPbId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try { await fn(); await loadPlaybooks(); } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return (
    <section class="card" aria-labelledby="create-h">
      <h2 id="create-h">Create</h2>
      {error ? <ErrorBox error={error} /> : null}
      <div class="row wrap">
        {!me?.org && (
          <form class="inline-form" onSubmit={(e) => { e.preventDefault(); run(() => api('POST', '/v1/orgs', { id: orgId })).then(() => { setPbOrg(orgId); setOrgId(''); }); }}>
            <div class="field"><label for="new-org">New org id</label><input id="new-org" value={orgId} onInput={(e) => setOrgId((e.target as HTMLInputElement).value)} placeholder="acme" /></div>
            <button type="submit" disabled={busy || !orgId}>Create org</button>
          </form>
        )}
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); run(() => api('POST', `/v1/orgs/${encodeURIComponent(pbOrg)}/playbooks`, { id: pbId })).then(() => setPbId('')); }}>
          <div class="field"><label for="new-pb-org">In org</label><input id="new-pb-org" value={pbOrg} onInput={(e) => setPbOrg((e.target as HTMLInputElement).value)} /></div>
          <div class="field"><label for="new-pb">New playbook id</label><input id="new-pb" value={pbId} onInput={(e) => setPbId((e.target as HTMLInputElement).value)} placeholder="campaigns" /></div>
          <button type="submit" disabled={busy || !pbId || !pbOrg}>Create playbook</button>
        </form>
      </div>
    </section>
  );
}
