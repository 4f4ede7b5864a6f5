import { createStore } from './store';

/** A problem document (RFC 9457) as the server sends it. */
export interface Issue {
  pointer?: string;
  line?: number;
  column?: number;
  path?: string;
  message: string;
}
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  reason?: string;
  kind?: string | null;
  because?: string | null;
  detail?: string;
  run_id?: string | null;
  issues?: Issue[];
  [k: string]: unknown;
}

export class ApiError extends Error {
  status: number;
  problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problem.detail || problem.title || `The server answered ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

const KEY = 'auto.studio.key';

function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY) || localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export const keyStore = createStore<string | null>(storedKey());
/** True when the server asked for a key (401, or 403 of kind unauthenticated). */
export const needKey = createStore<boolean>(false);

export function setKey(key: string | null, remember: boolean) {
  try {
    sessionStorage.removeItem(KEY);
    localStorage.removeItem(KEY);
    if (key) (remember ? localStorage : sessionStorage).setItem(KEY, key);
  } catch {
    /* storage may be off: the key lives in memory only */
  }
  keyStore.set(key);
}

export function authHeaders(): Record<string, string> {
  const key = keyStore.get();
  return key ? { authorization: `Bearer ${key}` } : {};
}

export function isUnauthenticated(status: number, problem: Problem | null): boolean {
  return status === 401 || (status === 403 && !!problem && problem.kind === 'unauthenticated');
}

export async function api<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json', ...authHeaders() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, { title: 'The server cannot be reached', detail: `The server cannot be reached: ${(error as Error).message}` });
  }
  const text = await response.text();
  let json: any = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!response.ok) {
    const problem: Problem = json && typeof json === 'object' ? json : { status: response.status, title: `The server answered ${response.status}`, detail: text.slice(0, 500) };
    if (isUnauthenticated(response.status, problem)) needKey.set(true);
    throw new ApiError(response.status, problem);
  }
  return json as T;
}

export const get = <T = any>(path: string, signal?: AbortSignal) => api<T>('GET', path, undefined, signal);

export function qs(params: Record<string, string | number | undefined | null>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

export const pbPath = (org: string, pb: string) => `/v1/orgs/${encodeURIComponent(org)}/playbooks/${encodeURIComponent(pb)}`;
export const defPath = (org: string, pb: string, type: string, name: string) => `${pbPath(org, pb)}/definitions/${encodeURIComponent(type)}/${encodeURIComponent(name)}`;

// The shapes the API returns (supplement §2).
export interface Me { caller: string; role: 'admin' | 'editor' | 'runner' | 'viewer' | string; org: string | null }
export interface Org { id: string; title: string | null; created_at: string }
export interface Playbook { org: string; id: string; title: string | null; created_at: string }
export interface Definition {
  type: string; name: string; version: number; status: string; description: string | null;
  source: string; overview?: string | null; diagram: string; warnings: Array<string | Issue>;
  input_schema: any; output_schema: any; triggers: any[]; triggers_since: string | null;
  used_by: string[]; created_at: string; updated_at: string;
}
export interface Run {
  run_id: string; type: string; name: string; definition_version: number; status: string;
  input?: any; output?: any; record: any; problem: Problem | null; started_by: string;
  started_at: string; ended_at: string | null;
}
export interface AutoEvent {
  id: string; type: string; source: string; subject?: string; time: string; data?: any;
  data_bytes?: number; run_id?: string; seq: number; [k: string]: unknown;
}
export interface InboxRequest {
  request_id: string; run_id: string; definition: { type: string; name: string; version: number };
  to: string; message: string; input: any; output_schema: any; status: string; created_at: string;
  expires_at: string; answered_by?: string | null; answer?: any;
}
export interface CheckResult {
  valid: boolean; issues: Issue[]; warnings: Array<string | Issue>; input_schema: any;
  output_schema: any; overview?: string | null;
}

