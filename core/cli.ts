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
