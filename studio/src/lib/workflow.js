// A workflow run drawn on its diagram: which node of the generated flowchart each task is, and
// what each task did, derived from the run's events (step_started, step_completed,
// step_failed, step_retried, wait_started, wait_ended, call_started, call_ended; the run's
// own run_* events end it).

/**
 * @typedef {{ id: string, name: string, depth: number, children: MermaidNode[] }} MermaidNode
 * @typedef {'done'|'failed'|'running'|'waiting'|'skipped'|'pending'} TaskState
 */

/**
 * The first ```mermaid block of a Markdown text, or null.
 * @param {string|null|undefined} markdown
 */
export function mermaidBlock(markdown) {
  if (!markdown) return null;
  const m = /```mermaid[^\n]*\n([\s\S]*?)```/.exec(markdown);
  return m ? m[1] : null;
}

/** @param {string} s */
function unescapeLabel(s) {
  return s
    .replace(/#quot;/g, '"')
    .replace(/#124;/g, '|')
    .replace(/#96;/g, '`')
    .replace(/#lt;/g, '<')
    .replace(/#gt;/g, '>')
    .replace(/#35;/g, '#');
}

/**
 * The tree of step nodes of a flowchart the runtime generated for a workflow's overview: each
 * node `sN` whose label is `N. name...`, nested as the subgraphs nest.
 * @param {string} source
 * @returns {MermaidNode[]}
 */
export function stepTree(source) {
  /** @type {MermaidNode[]} */
  const roots = [];
  /** @type {MermaidNode[]} */
  const stack = [];
  for (const raw of source.split('\n')) {
    const line = raw.replace(/\s+$/, '');
    if (!line.trim()) continue;
    if (line.trim() === 'end') {
      stack.pop();
      continue;
    }
    const sub = /^(\s*)subgraph\s+(s\d+)\s*\["\d+\.\s(.*?)(?::\s[^"]*)?"\]/.exec(line);
    const node = sub || /^(\s*)(s\d+)\s*(?:\[|\(|\{|>)+"\d+\.\s(.*?)(?::\s[^"]*)?"/.exec(line);
    if (!node) continue;
    const n = { id: node[2], name: unescapeLabel(node[3]), depth: stack.length, children: [] };
    if (stack.length) stack[stack.length - 1].children.push(n);
    else roots.push(n);
    if (sub) stack.push(n);
  }
  return roots;
}

/**
 * The task names a step's reference passes through: `/do/0/review/try/0/review-brief` names
 * review, then review-brief; each name follows a list index.
 * @param {string} reference
 * @returns {{ name: string, index: number, list: string, caught: boolean }[]}
 */
export function referencePath(reference) {
  const segs = reference.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const out = [];
  for (let i = 1; i < segs.length; i++) {
    if (/^\d+$/.test(segs[i]) && i + 1 < segs.length) {
      out.push({ name: segs[i + 1], index: Number(segs[i]), list: segs[i - 1], caught: segs[i - 2] === 'catch' });
      i++;
    }
  }
  return out;
}

/**
 * The node id of the task at a reference, or null.
 * @param {MermaidNode[]} tree @param {string} reference
 */
export function nodeForReference(tree, reference) {
  let level = tree;
  /** @type {MermaidNode|null} */
  let found = null;
  for (const step of referencePath(reference)) {
    const named = level.filter((n) => n.name === step.name);
    if (named.length === 0) return null;
    // A try's catch list is drawn after its tasks: of a name both use, the later is the catch's.
    found = step.caught ? named[named.length - 1] : named[0];
    level = found.children;
  }
  return found ? found.id : null;
}

/**
 * What each task did, by its reference, from the run's events in order.
 * @param {Array<{ type: string, data?: any }>} events
 * @param {string} runStatus started, succeeded, rejected or failed
 * @returns {Map<string, TaskState>}
 */
export function taskStates(events, runStatus) {
  /** @type {Map<string, TaskState>} */
  const states = new Map();
  /** @type {Set<string>} */
  const waiting = new Set();
  for (const e of events) {
    const ref = e.data && typeof e.data.reference === 'string' ? e.data.reference : null;
    if (!ref) continue;
    switch (e.type) {
      case 'step_started':
      case 'step_retried':
        states.set(ref, 'running');
        break;
      case 'step_completed':
        states.set(ref, 'done');
        waiting.delete(ref);
        break;
      case 'step_failed':
        states.set(ref, 'failed');
        waiting.delete(ref);
        break;
      case 'wait_started':
      case 'call_started':
        waiting.add(ref);
        if (states.get(ref) !== 'done') states.set(ref, 'waiting');
        break;
      case 'wait_ended':
      case 'call_ended':
        waiting.delete(ref);
        if (states.get(ref) === 'waiting') states.set(ref, 'running');
        break;
      default:
        break;
    }
  }
  // A parent of a waiting task waits too.
  for (const [ref, state] of states) {
    if (state !== 'running') continue;
    for (const w of waiting) if (w.startsWith(ref + '/') && states.get(w) === 'waiting') states.set(ref, 'waiting');
  }
  if (runStatus !== 'started') {
    // The run ended: what was still going did not finish.
    for (const [ref, state] of states) {
      if (state === 'running' || state === 'waiting') states.set(ref, runStatus === 'succeeded' ? 'done' : 'failed');
    }
  }
  return states;
}

/**
 * The state of every node of the diagram: the tasks' states, and `skipped` for a task the
 * ended run never reached (or `pending` while it runs).
 * @param {MermaidNode[]} tree
 * @param {Map<string, TaskState>} states by reference
 * @param {string} runStatus
 * @returns {Map<string, TaskState>} by node id
 */
export function nodeStates(tree, states, runStatus) {
  /** @type {Map<string, TaskState>} */
  const out = new Map();
  for (const [ref, state] of states) {
    const id = nodeForReference(tree, ref);
    if (id) out.set(id, state);
  }
  /** @param {MermaidNode[]} level */
  const fill = (level) => {
    for (const n of level) {
      if (!out.has(n.id)) out.set(n.id, runStatus === 'started' ? 'pending' : 'skipped');
      fill(n.children);
    }
  };
  fill(tree);
  return out;
}
