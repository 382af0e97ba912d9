import http from 'node:http';
import net from 'node:net';
import type { Container, Probe } from './manifests';

/**
 * A probe as the kubelet runs it: first after `initialDelaySeconds`, then every
 * `periodSeconds`, each attempt bounded by `timeoutSeconds`; `failureThreshold` failures in a
 * row (or `successThreshold` successes) change its verdict. HTTP: a status from 200 to 399 is a
 * success; TCP: the connection opens. Defaults are Kubernetes': 10 s period, 1 s timeout, 3
 * failures, 1 success.
 */

export type ProbeKind = 'startup' | 'readiness' | 'liveness';

/** A named port resolved against the container's ports, as the kubelet does. */
export function portOf(c: Container, port: number | string): number {
  if (typeof port === 'number') return port;
  const found = c.ports?.find((p) => p.name === port);
  if (!found) throw new Error(`container ${c.name} has no port named ${port}`);
  return found.containerPort;
}

function attempt(probe: Probe, host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (probe.httpGet) {
      const req = http.get({ host, port, path: probe.httpGet.path ?? '/', timeout: timeoutMs, headers: { 'user-agent': 'kube-probe/1.33' } }, (res) => {
        res.resume();
        resolve(res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 400);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      return;
    }
    if (probe.tcpSocket) {
      const socket = net.connect({ host, port, timeout: timeoutMs });
      socket.on('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('timeout', () => socket.destroy());
      socket.on('error', () => resolve(false));
      socket.on('close', () => resolve(false));
      return;
    }
    // exec probes belong to images the harness does not run.
    resolve(true);
  });
}

export interface Prober {
  /** Stops probing (the container stopped). */
  stop(): void;
  /** Forgets the verdict, so the next one is reported whatever it is (a kubelet back after its node hung). */
  forget(): void;
}

/**
 * Runs one probe until stopped; `onVerdict` is called when its verdict changes (and once with
 * the first verdict). `paused()` skips attempts while true (a frozen node's kubelet).
 */
export function startProbe(opts: {
  probe: Probe;
  container: Container;
  host: string;
  paused: () => boolean;
  onVerdict: (ok: boolean) => void;
}): Prober {
  const { probe, container, host } = opts;
  const period = (probe.periodSeconds ?? 10) * 1000;
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  const failureThreshold = probe.failureThreshold ?? 3;
  const successThreshold = probe.successThreshold ?? 1;
  const target = probe.httpGet ?? probe.tcpSocket;
  const port = target ? portOf(container, target.port) : 0;
  let verdict: boolean | undefined;
  let failures = 0;
  let successes = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const tick = async () => {
    if (stopped) return;
    if (!opts.paused()) {
      const ok = await attempt(probe, host, port, timeoutMs);
      if (stopped) return;
      if (ok) {
        failures = 0;
        successes += 1;
        if (verdict !== true && successes >= successThreshold) opts.onVerdict((verdict = true));
      } else {
        successes = 0;
        failures += 1;
        if (verdict !== false && failures >= failureThreshold) opts.onVerdict((verdict = false));
      }
    }
    timer = setTimeout(() => void tick(), period);
  };
  timer = setTimeout(() => void tick(), (probe.initialDelaySeconds ?? 0) * 1000);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    forget() {
      verdict = undefined;
      failures = 0;
      successes = 0;
    },
  };
}
