// Module resolution hook of the k6 test adapter (test support, not a k6 replacement): the
// bundles' `k6*` imports resolve to the adapter's shims, which hand out what vu.ts installed
// on globalThis.__k6adapter. A k6 module the adapter does not implement fails to load, loudly.
const SHIMS = new URL('./shims/', import.meta.url);
const IMPLEMENTED = new Set(['k6', 'k6/http', 'k6/metrics', 'k6/websockets', 'k6/timers']);

export async function resolve(specifier, context, next) {
  if (specifier === 'k6' || specifier.startsWith('k6/')) {
    if (!IMPLEMENTED.has(specifier)) throw new Error(`the k6 test adapter does not implement ${specifier}`);
    const name = specifier === 'k6' ? 'k6' : specifier.slice(3);
    return { url: new URL(`${name}.mjs`, SHIMS).href, shortCircuit: true, format: 'module' };
  }
  return next(specifier, context);
}
