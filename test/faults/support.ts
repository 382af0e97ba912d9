import { appendFileSync } from 'node:fs';
import http from 'node:http';

/** One HTTP exchange of the load: its status (0 when the connection failed) and body. */
export interface Outcome {
  status: number;
  body: string;
  at: number;
  ms: number;
}

/**
 * A GET on a connection of its own (`Connection: close`): as a client behind a load balancer
 * sees it, so a replica that stops listening is a refused connection, not a reused dead socket.
 */
export function get(port: number, path: string, headers: Record<string, string> = {}, localAddress?: string): Promise<Outcome> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close', ...headers }, localAddress }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, at: Date.now(), ms: performance.now() - t0 }));
      res.on('error', (err) => resolve({ status: 0, body: String(err), at: Date.now(), ms: performance.now() - t0 }));
    });
    req.on('error', (err) => resolve({ status: 0, body: String(err), at: Date.now(), ms: performance.now() - t0 }));
  });
}

/** `concurrency` loops each sending the next request as soon as the last one answered, until stopped. */
export function startLoad(concurrency: number, request: () => Promise<Outcome>) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) outcomes.push(await request());
  });
  return {
    outcomes,
    /** Outcomes from `since` (ms epoch) on. */
    after: (since: number) => outcomes.filter((o) => o.at >= since),
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

export interface FaultRow {
  scenario: string;
  requests: number;
  errors: number;
  /** Committed changes a client never got, or rows that differ from an uninterrupted run. */
  dataLost: number;
  recoveryMs: number;
  note?: string;
}

/** Adds a row to the table the fault suite prints at the end (global teardown). */
export function report(row: FaultRow): void {
  const file = process.env.MI_FAULT_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}

export function formatTable(rows: FaultRow[]): string {
  const head = ['scenario', 'requests', 'errors', 'data lost', 'recovery (ms)', 'note'];
  const cells = rows.map((r) => [r.scenario, String(r.requests), String(r.errors), String(r.dataLost), String(Math.round(r.recoveryMs)), r.note ?? '']);
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((v, i) => (i > 0 && i < 5 ? v.padStart(width[i]!) : v.padEnd(width[i]!))).join(' | ')} |`;
  return [line(head), `|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

/** Seconds each outage lasts (FAULT_OUTAGE_SECONDS; the figure is 30). */
export const OUTAGE_MS = Number(process.env.FAULT_OUTAGE_SECONDS ?? 10) * 1000;

export const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Restarts a process whenever it exits with a failure, a second after, as Kubernetes restarts a
 * container (D-110: an indexer that loses its database session exits rather than guess whether
 * it still holds the writer lock). Resolves when a run exits 0.
 */
export function supervise(start: () => { exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; child: { kill(s?: NodeJS.Signals): boolean } }) {
  let restarts = 0;
  let current = start();
  let stopped = false;
  const done = (async () => {
    for (;;) {
      const { code } = await current.exited;
      if (code === 0 || stopped) return code;
      restarts += 1;
      await until(1_000);
      current = start();
    }
  })();
  return {
    done,
    restarts: () => restarts,
    kill() {
      stopped = true;
      current.child.kill('SIGKILL');
    },
  };
}
