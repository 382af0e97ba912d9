import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { IDL } from '../../core/events';
import { freePort } from '../support/free-port';
import { ROOT } from '../support/processes';
import { waitFor } from '../support/tables';

/**
 * `npm run chain` (simulator/main.ts) as a child process: where it listens, and each request of
 * the security review that crashed it, stalled it or was answered outside JSON-RPC 2.0 (D-270,
 * D-271). Every case ends by asking the same process for its slot: a crash fails it there.
 */
interface Chain {
  child: ChildProcess;
  url: string;
  port: number;
  address: string;
  output: () => string;
  exited: Promise<number | null>;
}

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'chain-proc-'));
  dirs.push(d);
  return d;
};

function startChain(env: Record<string, string> = {}): { child: ChildProcess; listening: Promise<Chain>; output: () => string; exited: Promise<number | null> } {
  let out = '';
  const child = fork(path.join(ROOT, 'simulator/main.ts'), ['--data-dir', tmp()], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), PROGRAM_ID: IDL.address, LOG_LEVEL: 'warn', CHAIN_RPC_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<Chain>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number; address?: string }) => {
      if (m?.type !== 'listening') return;
      resolve({ child, url: `http://127.0.0.1:${m.port}`, port: m.port!, address: m.address!, output: () => out, exited });
    });
    child.once('exit', (code) => reject(new Error(`the chain exited (${code}) before listening: ${out}`)));
  });
  listening.catch(() => {});
  return { child, listening, output: () => out, exited };
}

const post = async (url: string, body: string | Buffer) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, json: (await r.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
};
const slotOf = async (url: string) => (await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }))).json.result as number;

/** One WebSocket message and the answer to it; `null` when the server closed instead. */
function wsAsk(url: string, frame: string | Buffer): Promise<{ answer: any; closeCode?: number }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'));
    ws.on('error', () => {}); // the close below says what happened
    ws.on('open', () => ws.send(frame));
    ws.on('message', (d) => {
      resolve({ answer: JSON.parse(d.toString()) });
      ws.close();
    });
    ws.on('close', (code) => resolve({ answer: null, closeCode: code }));
    setTimeout(() => reject(new Error('no answer')), 20_000).unref();
  });
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('npm run chain: where it listens', () => {
  it('listens on loopback by default and says so; CHAIN_RPC_HOST=0.0.0.0 listens on every interface and says that', async () => {
    const local = await startChain().listening;
    try {
      expect(local.address).toBe('127.0.0.1');
      expect(local.output()).toContain('listening on 127.0.0.1 only (this machine); CHAIN_RPC_HOST=0.0.0.0 serves other machines');
      expect(await slotOf(local.url)).toBeGreaterThan(0);
    } finally {
      local.child.kill('SIGTERM');
      await local.exited;
    }
    const wide = await startChain({ CHAIN_RPC_HOST: '0.0.0.0' }).listening;
    try {
      expect(wide.address).toBe('0.0.0.0');
      expect(wide.output()).toContain('listening on 0.0.0.0 (every interface): other machines can reach it (CHAIN_RPC_HOST)');
    } finally {
      wide.child.kill('SIGTERM');
      await wide.exited;
    }
  }, 120_000);

  it('with its port taken, prints one line naming CHAIN_RPC_PORT and exits 1 (no stack, no unhandled error event)', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const c = startChain({ CHAIN_RPC_PORT: String(port) });
      expect(await c.exited).toBe(1);
      expect(c.output().trim()).toBe(`port ${port} (the chain's RPC) is in use: stop what holds it (a local validator?) or set CHAIN_RPC_PORT`);
    } finally {
      holder.close();
    }
  }, 120_000);
});

describe('npm run chain: hostile requests (the security review, third pass)', () => {
  let chain: Chain;
  beforeAll(async () => {
    chain = await startChain().listening;
  }, 120_000);
  afterAll(async () => {
    chain.child.kill('SIGTERM');
    await chain.exited;
  });
  afterEach(async () => {
    // Still the same process, still answering.
    expect(chain.child.exitCode).toBeNull();
    expect(await slotOf(chain.url)).toBeGreaterThan(0);
  });

  it.each([
    ['null', -32600, null],
    ['{}', -32600, null],
    ['[]', -32600, null],
    ['{"method":"sendTransaction","params":5}', -32602, null],
    ['{"jsonrpc":"2.0","id":1,"method":"getTransaction","params":["x",{"encoding":{"toString":5}}]}', -32602, 1],
    ['{"jsonrpc":"2.0","id":2,"method":"getSignaturesForAddress","params":["x",5]}', -32602, 2],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"getSlot"}', -32600, null],
  ])('answers %s with JSON-RPC error %i', async (body, code, id) => {
    const r = await post(chain.url, body);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
  });

  it('answers [null] with a batch of one -32600', async () => {
    const r = await post(chain.url, '[null]');
    expect(r.json).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } }]);
  });

  it('refuses a body over 50 KiB (Agave\'s limit) with 413 and a JSON-RPC error, without buffering it', async () => {
    const r = await post(chain.url, Buffer.alloc(2 * 1024 * 1024, 0x20));
    expect(r.status).toBe(413);
    expect(r.json.error).toEqual({ code: -32600, message: 'Request body too large: at most 51200 bytes' });
  });

  it('refuses a batch of more than 100 calls (a provider\'s cap) as one -32600, and serves one of 100', async () => {
    const call = (i: number) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' });
    const over = await post(chain.url, JSON.stringify(Array.from({ length: 101 }, (_, i) => call(i))));
    expect(over.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a batch holds at most 100 calls' } });
    const full = await post(chain.url, JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i))));
    expect(full.json).toHaveLength(100);
  });

  it.each([
    ['null', -32600, null],
    ['[]', -32600, null],
    ['{"jsonrpc":"2.0","id":1,"method":"logsSubscribe","params":[{"mentions":5}]}', -32602, 1],
    ['{"jsonrpc":"2.0","id":2,"method":"logsSubscribe","params":5}', -32602, 2],
    ['{"jsonrpc":"2.0","id":3,"method":"logsSubscribe","params":[null]}', -32602, 3],
    ['not json', -32700, null],
  ])('answers the WebSocket message %s with JSON-RPC error %i', async (frame, code, id) => {
    const { answer } = await wsAsk(chain.url, frame);
    expect(answer).toEqual({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
  });

  it('closes a WebSocket that sends a message over 16 KiB with 1009', async () => {
    const { closeCode } = await wsAsk(chain.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logsSubscribe', params: ['x'.repeat(20_000)] }));
    expect(closeCode).toBe(1009);
  });

  it('survives a malformed WebSocket frame (a reserved opcode)', async () => {
    const socket = net.connect(chain.port, '127.0.0.1');
    const key = Buffer.from('0123456789abcdef').toString('base64');
    socket.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    // FIN + opcode 0x3 (reserved), masked, empty payload.
    socket.write(Buffer.from([0x83, 0x80, 1, 2, 3, 4]));
    await new Promise<void>((resolve) => socket.on('close', () => resolve()).on('error', () => {}));
  });
});

describe('npm start with the chain port taken', () => {
  it('prints one line naming CHAIN_RPC_PORT and exits 1 (no unhandled error event, no stack)', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as net.AddressInfo).port;
    const apiPort = await freePort();
    try {
      let out = '';
      const child = spawn('npm', ['start'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), API_PORT: String(apiPort), API_HOST: '127.0.0.1', CHAIN_RPC_PORT: String(port), DATA_DIR: tmp() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).not.toBe(0);
      const lines = out.split('\n').filter((l) => l.trim() && !l.startsWith('>'));
      expect(lines).toContain(`port ${port} (the chain's RPC) is in use: stop what holds it (a local validator?) or set CHAIN_RPC_PORT`);
      expect(out).not.toMatch(/Unhandled 'error' event|at .+\(.+:\d+:\d+\)|"level"/);
      await waitFor('the API port to be released', async () => {
        const free = await new Promise<boolean>((resolve) => {
          const s = net.createServer().once('error', () => resolve(false));
          s.listen(apiPort, '127.0.0.1', () => s.close(() => resolve(true)));
        });
        return free || undefined;
      }, 10_000);
    } finally {
      holder.close();
    }
  }, 180_000);
});
