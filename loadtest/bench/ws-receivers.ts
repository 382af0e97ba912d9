import type { ChildProcess } from 'node:child_process';
import { spawnListening } from './support';
import type { ClientsReply, ClientsRequest } from './ws-clients';

/**
 * `/ws` clients of the benches, split over `procs` processes (loadtest/bench/ws-clients.ts), all
 * subscribed to one channel. Each process counts per seq; `collect` merges them (counts add up,
 * the last arrival is the latest).
 */
export class Receivers {
  count = new Map<number, number>();
  last = new Map<number, number>();
  private procs: ChildProcess[] = [];

  constructor(
    readonly clients: number,
    private readonly procCount: number,
    private readonly channel: string,
  ) {}

  async connect(url: string, subscribe: boolean): Promise<void> {
    const n = Math.max(1, Math.min(this.procCount, this.clients));
    for (let i = 0; i < n; i++) {
      const p = spawnListening('loadtest/bench/ws-clients.ts', {});
      await p.port;
      this.procs.push(p.child);
    }
    await Promise.all(
      this.procs.map((p, i) => {
        const count = Math.floor(this.clients / n) + (i < this.clients % n ? 1 : 0);
        return ask(p, { type: 'connect', url, subscribe, count, channel: this.channel });
      }),
    );
  }

  pids = () => this.procs.map((p) => p.pid!);

  async reset(): Promise<void> {
    this.count.clear();
    this.last.clear();
    await Promise.all(this.procs.map((p) => ask(p, { type: 'reset' })));
  }

  async delivered(): Promise<number> {
    const r = await Promise.all(this.procs.map((p) => ask(p, { type: 'progress' })));
    return r.reduce((a, m) => a + (m.type === 'progress' ? m.delivered : 0), 0);
  }

  async collect(): Promise<void> {
    for (const m of await Promise.all(this.procs.map((p) => ask(p, { type: 'collect' })))) {
      if (m.type !== 'collect') continue;
      for (const [seq, n, at] of m.seqs) {
        this.count.set(seq, (this.count.get(seq) ?? 0) + n);
        this.last.set(seq, Math.max(this.last.get(seq) ?? 0, at));
      }
    }
  }

  close() {
    this.procs.forEach((p) => p.kill('SIGKILL'));
  }
}

/** One request to a clients process and its answer (one request at a time per process). */
function ask(p: ChildProcess, m: ClientsRequest): Promise<ClientsReply> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`a clients process exited (${code}) during ${m.type}`));
    const on = (r: ClientsReply) => {
      if (r.type !== m.type) return;
      p.off('message', on);
      p.off('exit', exited);
      resolve(r);
    };
    p.on('message', on);
    p.once('exit', exited);
    p.send(m);
  });
}
