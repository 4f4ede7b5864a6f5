import { useEffect, useRef, useState } from 'preact/hooks';
import { detectShape, seriesColumns } from './lib/shapes.js';
import { JsonBlock, Markdown } from './ui';

const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];

type UPlotCtor = any;
let uplotLoading: Promise<UPlotCtor> | null = null;
function loadUplot(): Promise<UPlotCtor> {
  if (!uplotLoading) {
    uplotLoading = Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([m]) => m.default);
  }
  return uplotLoading;
}

function useWidth(ref: { current: HTMLElement | null }): number {
  const [w, setW] = useState(640);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setW(Math.max(240, el.clientWidth));
    const ro = new ResizeObserver(() => setW(Math.max(240, el.clientWidth)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return w;
}

function SeriesChart({ value }: { value: any }) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const cols = seriesColumns(value);
  useEffect(() => {
    let plot: any = null;
    let cancelled = false;
    loadUplot().then((UPlot) => {
      if (cancelled || !ref.current) return;
      ref.current.innerHTML = '';
      plot = new UPlot(
        {
          width,
          height: 280,
          scales: { x: { time: cols.time } },
          series: [
            { label: cols.time ? 'Time' : 'x' },
            ...cols.names.map((name, i) => ({ label: name, stroke: PALETTE[i % PALETTE.length], width: 2, spanGaps: true, points: { show: cols.xs.length < 60 } })),
          ],
          axes: [{}, { label: value.unit || '' }],
          legend: { show: true },
        },
        [cols.xs, ...cols.ys] as any,
        ref.current,
      );
    });
    return () => { cancelled = true; if (plot) plot.destroy(); };
  }, [JSON.stringify(value), width]);
  return (
    <figure class="chart" data-shape="series">
      {value.title && <figcaption>{value.title}</figcaption>}
      <div ref={ref} class="chart-canvas" role="img" aria-label={`Line chart${value.title ? `: ${value.title}` : ''}, ${cols.names.length} line(s) of ${cols.xs.length} points${value.unit ? `, in ${value.unit}` : ''}`} />
      <details class="chart-data">
        <summary>Data</summary>
        <DataTable columns={['line', 'x', 'y']} rows={(value.lines || []).flatMap((l: any) => l.points.map((p: any) => [l.name, p.x, p.y]))} />
      </details>
    </figure>
  );
}

function CategoriesChart({ value }: { value: any }) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWidth(ref);
  const cats: Array<{ name: string; value: number | null }> = value.categories || [];
  useEffect(() => {
    let plot: any = null;
    let cancelled = false;
    loadUplot().then((UPlot) => {
      if (cancelled || !ref.current) return;
      ref.current.innerHTML = '';
      const xs = cats.map((_, i) => i);
      const bars = UPlot.paths.bars!({ size: [0.6, 80], align: 0 });
      plot = new UPlot(
        {
          width,
          height: 280,
          scales: { x: { time: false, range: [-0.5, Math.max(0.5, cats.length - 0.5)] }, y: { range: (_u: any, min: number, max: number) => [Math.min(0, min), Math.max(0, max) * 1.1 || 1] } },
          series: [
            { label: 'Category', value: (_u: any, i: number) => (i === null || cats[i] === undefined ? '' : cats[i].name) },
            { label: value.unit || 'Value', fill: '#2563ebcc', stroke: '#1d4ed8', paths: bars, points: { show: false } },
          ],
          axes: [
            { values: (_u: any, splits: number[]) => splits.map((i) => (Number.isInteger(i) && cats[i] ? cats[i].name : '')), splits: () => xs, gap: 6 },
            { label: value.unit || '' },
          ],
          legend: { show: true },
        },
        [xs, cats.map((c) => c.value)] as any,
        ref.current,
      );
    });
    return () => { cancelled = true; if (plot) plot.destroy(); };
  }, [JSON.stringify(value), width]);
  return (
    <figure class="chart" data-shape="categories">
      {value.title && <figcaption>{value.title}</figcaption>}
      <div ref={ref} class="chart-canvas" role="img" aria-label={`Bar chart${value.title ? `: ${value.title}` : ''}: ${cats.map((c) => `${c.name} ${c.value}`).join(', ')}`} />
    </figure>
  );
}

function DataTable({ columns, rows }: { columns: string[]; rows: unknown[][] }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Table">
      <table class="data">
        <thead><tr>{columns.map((c, i) => <th key={i} scope="col">{c}</th>)}</tr></thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>{r.map((cell, j) => <td key={j} class={typeof cell === 'number' ? 'num' : ''}>{cell === null || cell === undefined ? '—' : typeof cell === 'object' ? JSON.stringify(cell) : String(cell)}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** An output, drawn by its shape (series, categories, table, text), or as JSON. */
export function OutputView({ value, schema }: { value: unknown; schema?: any }) {
  const shape = detectShape(value, schema);
  const [raw, setRaw] = useState(false);
  if (value === undefined || value === null) return <p class="muted">No output.</p>;
  if (!shape) {
    if (typeof value === 'string') return <Markdown text={value} class="output-text" />;
    return <JsonBlock value={value} label="Output" />;
  }
  const v = value as any;
  return (
    <div class="output" data-shape={shape}>
      {!raw && shape === 'series' && <SeriesChart value={v} />}
      {!raw && shape === 'categories' && <CategoriesChart value={v} />}
      {!raw && shape === 'table' && (
        <figure class="chart" data-shape="table">
          {v.title && <figcaption>{v.title}</figcaption>}
          <DataTable columns={v.columns.map((c: any) => c.name)} rows={v.rows} />
        </figure>
      )}
      {!raw && shape === 'text' && (
        <div data-shape="text">
          {v.title && <h3>{v.title}</h3>}
          <Markdown text={v.text} />
        </div>
      )}
      {raw && <JsonBlock value={value} label="Output" />}
      <button type="button" class="link small" onClick={() => setRaw(!raw)} aria-pressed={raw}>{raw ? `Show as ${shape}` : 'Show JSON'}</button>
    </div>
  );
}
