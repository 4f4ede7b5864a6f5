import { get, needKey, keyStore, type Me, type Org, type Playbook } from './api';
import { createStore } from './store';

export const meStore = createStore<Me | null>(null);
export const playbooksStore = createStore<Playbook[] | null>(null);

export function can(me: Me | null, what: 'edit' | 'run' | 'admin'): boolean {
  if (!me) return false;
  if (me.role === 'admin') return true;
  if (what === 'edit') return me.role === 'editor';
  if (what === 'run') return me.role === 'runner';
  return false;
}

export const ROLE_WORDS: Record<string, string> = {
  admin: 'admin: everything',
  editor: 'editor: reads and definitions',
  runner: 'runner: reads, runs and events',
  viewer: 'viewer: reads only',
};

/** Who the key is, and every playbook of the orgs it reaches. */
export async function loadSession(): Promise<void> {
  const me = await get<Me>('/v1/me');
  meStore.set(me);
  needKey.set(false);
  await loadPlaybooks();
}

export async function loadPlaybooks(): Promise<void> {
  const me = meStore.get();
  let orgs: Org[];
  if (me && me.org) orgs = [{ id: me.org, title: null, created_at: '' }];
  else orgs = (await get<{ orgs: Org[] }>('/v1/orgs')).orgs;
  const lists = await Promise.all(orgs.map((o) => get<{ playbooks: Playbook[] }>(`/v1/orgs/${encodeURIComponent(o.id)}/playbooks`).then((l) => l.playbooks, () => [] as Playbook[])));
  playbooksStore.set(lists.flat());
}

keyStore.subscribe(() => {
  meStore.set(null);
});
