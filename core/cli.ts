import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * An integer command-line option: undefined when absent; a bad value prints one line and exits
 * 2 (usage error). Dependency-free, so entry points can use it before tracing starts.
 */
export function intOption(name: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) {
    process.stderr.write(`--${name} must be an integer of at least ${min} (got ${value})\n`);
    process.exit(2);
  }
  return n;
}

/**
 * `parseArgs` as every entry point wants it: a bad flag prints the message and the usage and
 * exits 2; `--help` prints the usage and exits 0 (the config needs a boolean `help` option).
 */
export function parseArgsOrExit<T extends ParseArgsConfig & { options: { help: { type: 'boolean' } } }>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage}\n`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return parsed;
}
