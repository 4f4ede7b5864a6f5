// Parses Mermaid diagrams with the real parser (npm mermaid's `mermaid.parse`) and reports each
// one it refuses. Installed and run by scripts/mermaid, which copies it beside its node_modules.
//
//   node mermaid-parse.mjs [FILE...]
//
// Each FILE (or stdin, without one) is a diagram, or Markdown whose ```mermaid blocks are the
// diagrams. Prints `FILE: N diagrams parsed` for each, and for each refused diagram
// `FILE#K: ` and the parser's words on stderr; exits 1 when any was refused, 2 when none was
// found.

import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

// Mermaid's sanitiser (DOMPurify) needs a window before mermaid is loaded.
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });

/** The diagrams of a text: its ```mermaid blocks, or the whole text when it has none. */
function diagrams(text) {
  const blocks = [...text.matchAll(/^```mermaid[ \t]*\n([\s\S]*?)^```[ \t]*$/gm)].map((m) => m[1]);
  if (blocks.length > 0) return blocks;
  return text.trim() === '' ? [] : [text];
}

const inputs = process.argv.slice(2);
const sources = inputs.length > 0
  ? inputs.map((file) => [file, readFileSync(file, 'utf8')])
  : [['stdin', readFileSync(0, 'utf8')]];

let refused = 0;
let parsed = 0;
for (const [name, text] of sources) {
  const found = diagrams(text);
  let k = 0;
  for (const diagram of found) {
    k += 1;
    try {
      const result = await mermaid.parse(diagram);
      if (!result || !String(result.diagramType).startsWith('flowchart')) {
        throw new Error(`not read as a flowchart but as ${result && result.diagramType}`);
      }
      parsed += 1;
    } catch (error) {
      refused += 1;
      const words = String(error && error.message ? error.message : error);
      process.stderr.write(`${name}#${k}: ${words}\n`);
    }
  }
  process.stdout.write(`${name}: ${found.length} diagrams\n`);
}
if (refused > 0) {
  process.stderr.write(`${refused} of ${parsed + refused} diagrams refused\n`);
  process.exit(1);
}
if (parsed === 0) {
  process.stderr.write('no diagram found\n');
  process.exit(2);
}
