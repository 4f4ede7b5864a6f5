import { useEffect, useState } from 'preact/hooks';

export interface Route {
  path: string[];
  query: URLSearchParams;
  raw: string;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/';
  const [p, q = ''] = raw.split('?');
  const path = p.split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  return { path, query: new URLSearchParams(q), raw };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** `#/a/b?x=1` from segments and query parameters. */
export function href(segments: Array<string | number>, query?: Record<string, string | undefined | null>): string {
  const p = '#/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
  if (!query) return p;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${p}?${s}` : p;
}

export function navigate(to: string, replace = false) {
  if (replace) history.replaceState(null, '', to);
  else location.hash = to.replace(/^#/, '');
  if (replace) dispatchEvent(new HashChangeEvent('hashchange'));
}

export const pbHref = (org: string, pb: string, ...rest: Array<string | number>) => href(['orgs', org, 'playbooks', pb, ...rest]);
