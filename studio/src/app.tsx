import { useEffect, useRef, useState } from 'preact/hooks';
import { lazy, Suspense } from 'preact/compat';
import { needKey, setKey, keyStore, get, pbPath, qs, isUnauthenticated, type Me } from './api';
import { useStore } from './store';
import { useRoute, href, pbHref, navigate } from './router';
import { meStore, playbooksStore, loadSession, can, ROLE_WORDS } from './session';
import { liveState, restartShared, useLiveListing } from './live';
import { ErrorBox, Loading, StatusPill, RoleRefusal } from './ui';
import { Home } from './pages/home';
import { DefinitionsPage, DefinitionPage } from './pages/definitions';
import { RunsPage, RunPage, StartRunPage } from './pages/runs';
import { InboxPage } from './pages/inbox';
import { EventsPage } from './pages/events';

const EditorPage = lazy(() => import('./pages/editor').then((m) => ({ default: m.EditorPage })));

export function App() {
  const route = useRoute();
  const me = useStore(meStore);
  const asking = useStore(needKey);
  const key = useStore(keyStore);
  const [error, setError] = useState<unknown>(null);
  const firstKey = useRef(true);

  useEffect(() => {
    setError(null);
    if (firstKey.current) firstKey.current = false;
    else restartShared();
    loadSession().catch((e) => setError(e));
  }, [key]);

  if (asking) return <KeyPrompt />;
  // `#/o/ORG/p/PB/...` is read as `#/orgs/ORG/playbooks/PB/...` (short links, and the routes of
  // the Studio's first slice).
  const path = route.path[0] === 'o' && route.path[2] === 'p' ? ['orgs', route.path[1], 'playbooks', route.path[3], ...route.path.slice(4)] : route.path;
  const [section0, org, section1, pb, area, ...rest] = path;
  const inPlaybook = section0 === 'orgs' && section1 === 'playbooks' && org && pb;

  let page;
  if (error && !me) page = <ErrorBox error={error} />;
  else if (!me) page = <Loading what="Connecting" />;
  else if (!inPlaybook) page = <Home />;
  else {
    const a = area || 'definitions';
    if (a === 'definitions') {
      // The editor's code is not even loaded for a role that may not edit.
      if (rest[0] === 'new') {
        page = can(me, 'edit')
          ? <Suspense fallback={<Loading what="Loading the editor" />}><EditorPage org={org} pb={pb} /></Suspense>
          : <RoleRefusal title="New definition" role={me.role} what="edit definitions" needs="editor or admin" back={pbHref(org, pb, 'definitions')} backLabel="Back to the definitions" />;
      } else if (rest.length >= 2 && rest[2] === 'edit') {
        page = can(me, 'edit')
          ? <Suspense fallback={<Loading what="Loading the editor" />}><EditorPage org={org} pb={pb} type={rest[0]} name={rest[1]} /></Suspense>
          : <RoleRefusal title={`Edit ${rest[0]} ${rest[1]}`} role={me.role} what="edit definitions" needs="editor or admin" back={pbHref(org, pb, 'definitions', rest[0], rest[1])} backLabel={`Back to ${rest[0]} ${rest[1]}`} />;
      }
      else if (rest.length >= 2 && rest[2] === 'run') page = <StartRunPage org={org} pb={pb} type={rest[0]} name={rest[1]} />;
      else if (rest.length >= 2) page = <DefinitionPage org={org} pb={pb} type={rest[0]} name={rest[1]} query={route.query} />;
      else page = <DefinitionsPage org={org} pb={pb} query={route.query} />;
    } else if (a === 'runs') {
      page = rest[0] ? <RunPage org={org} pb={pb} runId={rest[0]} /> : <RunsPage org={org} pb={pb} query={route.query} />;
    } else if (a === 'inbox') page = <InboxPage org={org} pb={pb} query={route.query} />;
    else if (a === 'events') page = <EventsPage org={org} pb={pb} query={route.query} />;
    else page = <p>There is no such page. <a href={pbHref(org, pb, 'definitions')}>Go to the definitions</a>.</p>;
  }

  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to the page</a>
      <Nav org={inPlaybook ? org : undefined} pb={inPlaybook ? pb : undefined} area={area || (inPlaybook ? 'definitions' : '')} />
      <main id="main" tabIndex={-1}>{page}</main>
    </div>
  );
}

function Nav({ org, pb, area }: { org?: string; pb?: string; area: string }) {
  const me = useStore(meStore);
  const playbooks = useStore(playbooksStore);
  const live = useStore(liveState);
  const current = org && pb ? `${org}/${pb}` : '';
  const items: Array<[string, string]> = [['definitions', 'Definitions'], ['runs', 'Runs'], ['inbox', 'Inbox'], ['events', 'Events']];
  return (
    <header class="nav">
      <a class="brand" href={href([])}>
        <span class="logo" aria-hidden="true">◆</span> Auto Studio
      </a>
      <div class="switcher">
        <label for="pb-switch">Playbook</label>
        <select id="pb-switch" value={current} onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value;
          if (!v) navigate(href([]));
          else { const [o, p] = v.split('/'); navigate(pbHref(o, p, area && area !== '' ? area : 'definitions')); }
        }}>
          <option value="">All playbooks…</option>
          {(playbooks || []).map((p) => <option key={`${p.org}/${p.id}`} value={`${p.org}/${p.id}`}>{p.org} / {p.title || p.id}</option>)}
        </select>
      </div>
      {org && pb && (
        <nav aria-label="Playbook">
          <ul class="nav-list">
            {items.map(([id, label]) => (
              <li key={id}><a href={pbHref(org, pb, id)} aria-current={area === id ? 'page' : undefined} class={area === id ? 'active' : ''}>{label}{id === 'inbox' && <OpenCount org={org} pb={pb} />}</a></li>
            ))}
          </ul>
        </nav>
      )}
      <div class="nav-foot">
        {org && pb && live !== 'off' && <div class="live" title="The event stream the lists follow"><StatusPill status={live} label={live === 'live' ? 'Live' : live} /></div>}
        {me && (
          <div class="who">
            <div><span class="muted">Signed in as</span> <strong>{me.caller}</strong></div>
            <div class="muted small">{ROLE_WORDS[me.role] || me.role}{me.org ? ` · org ${me.org}` : ''}</div>
            {keyStore.get() && <button type="button" class="link small" onClick={() => { setKey(null, false); needKey.set(true); }}>Change key</button>}
          </div>
        )}
      </div>
    </header>
  );
}

/** How many requests wait in the inbox, kept up to date from the stream. */
function OpenCount({ org, pb }: { org: string; pb: string }) {
  const open = useLiveListing(org, pb, (signal) => get<{ requests: unknown[] }>(`${pbPath(org, pb)}/requests${qs({ status: 'open', limit: 1000 })}`, signal), [], (e) => e.type.startsWith('request_') || e.type.startsWith('run_'), 700);
  const n = open.data?.requests.length || 0;
  if (!n) return null;
  return <span class="count" aria-label={`, ${n} open`}>{n}</span>;
}

type KeyCheck = { state: 'idle' } | { state: 'checking' } | { state: 'refused'; detail: string } | { state: 'error'; detail: string };

/** Asks the server who a key is, without keeping it: the caller, or why not. */
async function tryKey(key: string): Promise<{ me: Me } | { refused: string } | { error: string }> {
  let response: Response;
  try {
    response = await fetch('/v1/me', { headers: { accept: 'application/json', authorization: `Bearer ${key}` } });
  } catch (e) {
    return { error: `The server cannot be reached: ${(e as Error).message}` };
  }
  let body: any = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (response.ok && body && typeof body.role === 'string') return { me: body as Me };
  if (isUnauthenticated(response.status, body)) return { refused: 'The server does not know this key. Check that you copied all of it (a key starts with auto_), or ask an admin of your org for a new one.' };
  return { error: (body && (body.detail || body.title)) || `The server answered ${response.status}.` };
}

function KeyPrompt() {
  const [key, setKeyText] = useState('');
  const [remember, setRemember] = useState(false);
  const [check, setCheck] = useState<KeyCheck>({ state: 'idle' });
  const had = keyStore.get();
  const submit = async (e: Event) => {
    e.preventDefault();
    const candidate = key.trim();
    if (!candidate) {
      setCheck({ state: 'refused', detail: 'Enter a key first.' });
      return;
    }
    setCheck({ state: 'checking' });
    const answer = await tryKey(candidate);
    if ('me' in answer) {
      setKey(candidate, remember);
      needKey.set(false);
      return;
    }
    setCheck('refused' in answer ? { state: 'refused', detail: answer.refused } : { state: 'error', detail: answer.error });
  };
  const problem = check.state === 'refused' || check.state === 'error' ? check.detail : null;
  return (
    <div class="key-page">
      <main id="main" class="key-card card">
        <h1>Auto Studio</h1>
        <p>{had ? 'The server no longer takes the key this browser kept (it may have been removed). Enter a key it knows.' : 'This server needs a key. Enter the key an admin of your org gave you (auto key new prints one).'}</p>
        <form onSubmit={submit} noValidate>
          <div class={`field ${problem ? 'invalid' : ''}`}>
            <label for="key">Key</label>
            <input id="key" type="password" autoComplete="off" value={key} aria-invalid={problem ? 'true' : undefined} aria-describedby={problem ? 'key-error' : undefined}
              onInput={(e) => { setKeyText((e.target as HTMLInputElement).value); if (check.state !== 'checking') setCheck({ state: 'idle' }); }} autoFocus />
            {problem && <p class="field-error key-error" id="key-error" role="alert" data-key-check={check.state}>{problem}</p>}
          </div>
          <div class="field check">
            <label><input type="checkbox" checked={remember} onChange={(e) => setRemember((e.target as HTMLInputElement).checked)} /> Remember on this computer</label>
          </div>
          <button type="submit" class="primary" disabled={check.state === 'checking'}>{check.state === 'checking' ? 'Checking…' : 'Continue'}</button>
        </form>
      </main>
    </div>
  );
}

export { can };
