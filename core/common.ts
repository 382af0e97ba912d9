import type { Config } from './config';
import type { Logger } from './telemetry/logger';
import type { Metrics } from './telemetry/metrics';

/**
 * Ordered shutdown: hooks run once, last registered first (a server registered after its
 * database closes before it), each awaited; a failing hook is logged and the rest still run.
 */
export interface Shutdown {
  add(name: string, hook: () => Promise<void> | void): void;
  run(reason: string): Promise<void>;
  /** Aborted when shutdown starts: long-running loops watch it. */
  signal: AbortSignal;
  readonly isShuttingDown: boolean;
}

export function createShutdown(logger: Pick<Logger, 'info' | 'error'>): Shutdown {
  const hooks: { name: string; hook: () => Promise<void> | void }[] = [];
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  return {
    add: (name, hook) => void hooks.push({ name, hook }),
    signal: controller.signal,
    get isShuttingDown() {
      return running !== undefined;
    },
    run(reason) {
      running ??= (async () => {
        logger.info({ reason }, 'shutting down');
        controller.abort();
        for (const { name, hook } of [...hooks].reverse()) {
          try {
            await hook();
          } catch (err) {
            logger.error({ err, hook: name }, 'shutdown hook failed');
          }
        }
      })();
      return running;
    },
  };
}

/** What every module of a process gets, instead of a DI container. */
export interface Common {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  shutdown: Shutdown;
}
