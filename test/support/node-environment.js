// Jest's node environment, plus two things per worker process. When Jest force-exits a worker
// that did not exit by itself once the suites were done ("A worker process has failed to exit
// gracefully"), the worker first names what held it open (its sockets, servers and child
// processes, and the timers of a second or more the suites' code set, with where each was set),
// so the suite that leaked is found from the run that showed it rather than by running again
// with --detectOpenHandles. And a worker that nothing holds leaves at once (below).
const { TestEnvironment } = require('jest-environment-node');
const fs = require('node:fs');
const util = require('node:util');

/** Timers of a second or more that are pending, and where they were set. */
const timers = new Map();

function whereSet() {
  const stack = new Error().stack.split('\n').slice(3);
  const ours = stack.filter((l) => !/\(node:|node_modules[\\/](jest|@jest|expect)|node-environment\.js/.test(l));
  return (ours.length ? ours : stack).slice(0, 3).map((l) => l.trim().replace(/^at /, '')).join(' < ');
}

function follow(global) {
  const { setTimeout: set, setInterval: every, clearTimeout: clear, clearInterval: clearEvery } = global;
  const wrap = (start, repeats) => {
    const wrapped = function (fn, ms, ...args) {
      if (typeof fn !== 'function' || !(ms >= 1000)) return start(fn, ms, ...args);
      const t = start(function (...a) {
        if (!repeats) timers.delete(t);
        return fn.apply(this, a);
      }, ms, ...args);
      timers.set(t, `${repeats ? 'setInterval' : 'setTimeout'} ${ms} ms at ${whereSet()}`);
      return t;
    };
    if (start[util.promisify.custom]) wrapped[util.promisify.custom] = start[util.promisify.custom];
    return wrapped;
  };
  global.setTimeout = wrap(set, false);
  global.setInterval = wrap(every, true);
  global.clearTimeout = (t) => (timers.delete(t), clear(t));
  global.clearInterval = (t) => (timers.delete(t), clearEvery(t));
}

function describeHandle(h) {
  const kind = h?.constructor?.name ?? typeof h;
  if (kind === 'Socket' || kind === 'TLSSocket') return h.remotePort ? `${kind} to ${h.remoteAddress}:${h.remotePort}` : undefined;
  if (kind === 'Server') return `Server on ${JSON.stringify(h.address())}`;
  if (kind === 'ChildProcess') return `ChildProcess ${h.pid} ${(h.spawnargs ?? []).join(' ').slice(0, 200)}`;
  return undefined;
}

if (!process.listenerCount('SIGTERM')) {
  process.once('SIGTERM', () => {
    const handles = process._getActiveHandles().filter((h) => h?.hasRef?.() !== false).map(describeHandle).filter(Boolean);
    const pending = [...timers].filter(([t]) => !t._destroyed && t.hasRef()).map(([, where]) => where);
    const held = [...handles, ...pending];
    fs.writeSync(2, `jest worker ${process.env.JEST_WORKER_ID} held open at exit by: ${held.join('; ') || process.getActiveResourcesInfo().join(', ')}\n`);
    process.exit(143);
  });
}

// A worker ends a run holding 1.1 to 1.3 GB, and a process that size took 0.8 to 2 s to be gone
// after its last 'exit' handler when it ended by itself: a natural exit tears the V8 heap down,
// `process.exit` does not (0.55 s). Past Jest's grace (jest.config.js) Jest killed such a worker
// as "failed to exit gracefully", with no leak to name. This runs only once nothing holds the
// event loop, so a worker held open is still held, and named.
process.once('beforeExit', (code) => process.exit(code));

class NodeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    follow(this.global);
  }
}

module.exports = NodeEnvironment;
