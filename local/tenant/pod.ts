import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';
import type { Container, PodSpec } from './manifests';
import { startProbe, type Prober } from './probes';

/**
 * A pod as processes on this machine, run the way a kubelet runs it: init containers one after
 * another to completion, then the containers; a startup probe gates the others; a failing
 * liveness (or startup) probe kills the container (preStop, SIGTERM, SIGKILL after the grace
 * period) and it restarts with the kubelet's back-off (10 s doubling to 5 min, reset after 10 min
 * up); readiness says whether the Service's front sends it traffic. The pod keeps its address
 * across restarts, as a pod keeps its IP.
 */

export interface Launch {
  file: string;
  args: string[];
  env: Record<string, string>;
}

export type PodEvent = { pod: string; container?: string; type: 'Started' | 'Exited' | 'Unhealthy' | 'Killing' | 'BackOff' | 'Ready' | 'NotReady' | 'Failed'; message: string };

export interface PodOptions {
  name: string;
  ip: string;
  spec: PodSpec;
  /** The container's process, or a refusal (CreateContainerConfigError) the pod reports and retries. */
  launch: (c: Container) => Launch;
  cwd: string;
  logDir: string;
  onEvent: (e: PodEvent) => void;
  onReadyChange: (ready: boolean) => void;
}

const BACKOFF_START_MS = 10_000;
/** The node controller's node-monitor-grace-period: a node silent this long is NotReady, and so are its pods. */
export const NODE_GRACE_MS = 40_000;
const BACKOFF_MAX_MS = 300_000;
const BACKOFF_RESET_MS = 600_000;

interface Running {
  container: Container;
  child?: ChildProcess;
  exited?: Promise<void>;
  probers: Prober[];
  ready: boolean;
  backoffMs: number;
  startedAt: number;
  restarts: number;
  killing: boolean;
}

export function createPod(opts: PodOptions) {
  const { spec, name } = opts;
  const graceMs = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
  const running = new Map<string, Running>();
  let frozen = false;
  let nodeTimer: NodeJS.Timeout | undefined;
  let stopping = false;
  let wasReady = false;
  const event = (e: Omit<PodEvent, 'pod'>) => opts.onEvent({ pod: name, ...e });

  const updateReady = () => {
    const ready = !stopping && running.size === spec.containers.length && [...running.values()].every((r) => r.ready);
    if (ready !== wasReady) {
      wasReady = ready;
      event({ type: ready ? 'Ready' : 'NotReady', message: ready ? 'every container is ready' : 'a container is not ready' });
      opts.onReadyChange(ready);
    }
  };

  function spawnProcess(c: Container): { child: ChildProcess; exited: Promise<number | null> } {
    const l = opts.launch(c);
    const log = openSync(path.join(opts.logDir, `${name}_${c.name}.log`), 'a');
    // Its own process group: a terminal's Ctrl-C reaches the harness, which stops pods as a kubelet does.
    const child = spawn(l.file, l.args, { cwd: opts.cwd, env: l.env, stdio: ['ignore', log, log], detached: true });
    closeSync(log);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
    return { child, exited };
  }

  /** preStop, SIGTERM, then SIGKILL once the grace period is over: the kubelet's killContainer. */
  async function kill(r: Running, reason: string): Promise<void> {
    if (!r.child || r.killing) return r.exited;
    r.killing = true;
    event({ container: r.container.name, type: 'Killing', message: reason });
    r.probers.forEach((p) => p.stop());
    r.ready = false;
    updateReady();
    const deadline = Date.now() + graceMs;
    const sleep = r.container.lifecycle?.preStop?.sleep?.seconds;
    if (sleep) await new Promise((res) => setTimeout(res, sleep * 1000));
    r.child.kill('SIGTERM');
    const timer = setTimeout(() => r.child?.kill('SIGKILL'), Math.max(0, deadline - Date.now()));
    await r.exited;
    clearTimeout(timer);
  }

  function startContainer(c: Container, r: Running): void {
    let proc: ReturnType<typeof spawnProcess>;
    try {
      proc = spawnProcess(c);
    } catch (err) {
      event({ container: c.name, type: 'Failed', message: `CreateContainerConfigError: ${(err as Error).message}` });
      r.exited = new Promise((res) => setTimeout(res, r.backoffMs));
      void r.exited.then(() => !stopping && startContainer(c, r));
      return;
    }
    Object.assign(r, { child: proc.child, killing: false, ready: false, startedAt: Date.now(), probers: [] });
    event({ container: c.name, type: 'Started', message: `pid ${proc.child.pid}` });
    const probe = (kind: 'startup' | 'liveness' | 'readiness', onVerdict: (ok: boolean) => void): Prober | undefined => {
      const p = c[`${kind}Probe`];
      if (!p) return undefined;
      const prober = startProbe({ probe: p, container: c, host: opts.ip, paused: () => frozen, onVerdict });
      r.probers.push(prober);
      return prober;
    };
    const afterStartup = () => {
      probe('liveness', (ok) => {
        if (!ok) {
          event({ container: c.name, type: 'Unhealthy', message: 'Liveness probe failed' });
          void kill(r, 'failed liveness probe, will be restarted');
        }
      });
      const hasReadiness = probe('readiness', (ok) => {
        r.ready = ok;
        updateReady();
      });
      if (hasReadiness === undefined) {
        r.ready = true;
        updateReady();
      }
    };
    // The startup probe runs until it first succeeds, then never again (the kubelet's rule).
    const startup = probe('startup', (ok) => {
      if (ok) {
        startup?.stop();
        return afterStartup();
      }
      event({ container: c.name, type: 'Unhealthy', message: 'Startup probe failed' });
      void kill(r, 'failed startup probe, will be restarted');
    });
    if (startup === undefined) afterStartup();

    r.exited = proc.exited.then(async (code) => {
      r.probers.forEach((p) => p.stop());
      r.ready = false;
      r.child = undefined;
      updateReady();
      event({ container: c.name, type: 'Exited', message: `exit code ${code}` });
      if (stopping) return;
      if (Date.now() - r.startedAt > BACKOFF_RESET_MS) r.backoffMs = BACKOFF_START_MS;
      event({ container: c.name, type: 'BackOff', message: `restarting in ${r.backoffMs / 1000} s` });
      await new Promise((res) => setTimeout(res, r.backoffMs));
      r.backoffMs = Math.min(BACKOFF_MAX_MS, r.backoffMs * 2);
      r.restarts += 1;
      if (!stopping) startContainer(c, r);
    });
  }

  /** An init container to completion, retried with the same back-off until it succeeds. */
  async function runInit(c: Container): Promise<boolean> {
    let backoff = BACKOFF_START_MS;
    while (!stopping) {
      try {
        const proc = spawnProcess(c);
        event({ container: c.name, type: 'Started', message: `init, pid ${proc.child.pid}` });
        const code = await proc.exited;
        if (code === 0) return true;
        event({ container: c.name, type: 'Exited', message: `init container exited ${code}` });
      } catch (err) {
        event({ container: c.name, type: 'Failed', message: `CreateContainerConfigError: ${(err as Error).message}` });
      }
      await new Promise((res) => setTimeout(res, backoff));
      backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
    }
    return false;
  }

  const children = () => [...running.values()].flatMap((r) => (r.child ? [r.child] : []));

  return {
    name,
    ip: opts.ip,
    spec,
    async start(): Promise<void> {
      for (const c of spec.initContainers ?? []) if (!(await runInit(c))) return;
      for (const c of spec.containers) {
        const r: Running = { container: c, probers: [], ready: false, backoffMs: BACKOFF_START_MS, startedAt: Date.now(), restarts: 0, killing: false };
        running.set(c.name, r);
        startContainer(c, r);
      }
    },
    ready: () => wasReady,
    restarts: () => [...running.values()].reduce((n, r) => n + r.restarts, 0),
    pids: () => children().map((c) => c.pid!),
    /** The container's process stops answering (SIGSTOP); its kubelet goes on probing. */
    hang(): void {
      children().forEach((c) => c.kill('SIGSTOP'));
    },
    /**
     * Its node hangs: the processes stop and so does the kubelet (no probes, no restarts); after
     * the node controller's grace period the pod is NotReady, so the Service stops sending it
     * traffic, as endpoints drop a silent node's pods.
     */
    freeze(): void {
      frozen = true;
      children().forEach((c) => c.kill('SIGSTOP'));
      nodeTimer = setTimeout(() => {
        for (const r of running.values()) r.ready = false;
        updateReady();
      }, NODE_GRACE_MS);
    },
    resume(): void {
      frozen = false;
      clearTimeout(nodeTimer);
      children().forEach((c) => c.kill('SIGCONT'));
      // The kubelet is back: its probes report afresh (the node controller had marked the pod NotReady).
      for (const r of running.values()) r.probers.forEach((p) => p.forget());
    },
    async stop(): Promise<void> {
      stopping = true;
      frozen = false;
      clearTimeout(nodeTimer);
      children().forEach((c) => c.kill('SIGCONT'));
      await Promise.all([...running.values()].map((r) => kill(r, 'pod deleted')));
      updateReady();
    },
  };
}

export type Pod = ReturnType<typeof createPod>;
