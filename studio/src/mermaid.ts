// Mermaid is large: it is loaded on first use, as its own chunks, and renders one diagram at a
// time (its renderer keeps global state).
type MermaidApi = typeof import('mermaid').default;

let loading: Promise<MermaidApi> | null = null;
let queue: Promise<unknown> = Promise.resolve();
let counter = 0;

function load(): Promise<MermaidApi> {
  if (!loading) {
    loading = import('mermaid').then(({ default: mermaid }) => {
      mermaid.initialize({
        startOnLoad: false,
        securityLevel: 'strict',
        theme: 'neutral',
        fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
        flowchart: { useMaxWidth: true, htmlLabels: false },
      });
      return mermaid;
    });
  }
  return loading;
}

/** Renders Mermaid source to an SVG string; rejects with Mermaid's message on a bad diagram. */
export function renderMermaid(source: string): Promise<{ svg: string; id: string }> {
  const job = queue.then(async () => {
    const mermaid = await load();
    const id = `mmd-${++counter}`;
    const { svg } = await mermaid.render(id, source);
    return { svg, id };
  });
  queue = job.catch(() => undefined);
  return job;
}

/** The node id (as the source names it, such as s3) of a rendered node or subgraph element. */
export function nodeIdOf(element: Element, diagramId: string): string | null {
  const dataId = element.getAttribute('data-id');
  if (dataId) return dataId;
  const id = element.id || '';
  const m = /flowchart-(.+)-\d+$/.exec(id);
  if (m) return m[1];
  if (id.startsWith(diagramId + '-')) return id.slice(diagramId.length + 1);
  return id || null;
}
