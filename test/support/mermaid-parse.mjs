// Parses Mermaid diagrams with Mermaid's own parser, the one GitHub's renderer runs. Mermaid
// needs a DOM for the sanitiser some diagram types call while parsing, so jsdom stands in for a
// browser. Reads a JSON array of diagram texts on stdin; writes, for each, null when it parses
// or the parser's first line of error.
import { JSDOM } from 'jsdom';

const { window } = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const text of JSON.parse(input)) {
  try {
    await mermaid.parse(text);
    results.push(null);
  } catch (e) {
    results.push(String(e?.message ?? e).split('\n').slice(0, 3).join(' | '));
  }
}
process.stdout.write(JSON.stringify(results));
