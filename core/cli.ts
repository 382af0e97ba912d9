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

type HelpConfig = ParseArgsConfig & { options: { help: { type: 'boolean' } } };
type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** What a command line asks for: the parsed arguments, or an exit with text (usage or error). */
export type CommandLine<T extends ParseArgsConfig> =
  | { kind: 'run'; parsed: Parsed<T>; command: string | undefined }
  | { kind: 'help'; text: string }
  | { kind: 'usage-error'; text: string };

/** Node's parse errors, as one short line naming what was wrong (no "To specify…" advice). */
function oneLine(err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException;
  const quoted = /'([^']*)'/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted ?? message}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${quoted ?? message}`;
    default:
      return message.split('\n')[0]!;
  }
}

/**
 * Every entry point's command line, without side effects (the pure part, for CLIs tested as
 * functions): `--help`/`-h` gives the usage; an unknown option, a stray argument or, with
 * `commands`, an unknown or missing command gives one line naming it, then the usage.
 */
export function readCommandLine<T extends HelpConfig>(config: T, usage: string, opts: { commands?: readonly string[] } = {}): CommandLine<T> {
  const withShortHelp = { ...config, options: { ...config.options, help: { ...config.options.help, short: 'h' } } } as T;
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs(withShortHelp);
  } catch (err) {
    return { kind: 'usage-error', text: `${oneLine(err)}\n${usage}\n` };
  }
  if ((parsed.values as { help?: boolean }).help) return { kind: 'help', text: `${usage}\n` };
  const command = (parsed.positionals as string[] | undefined)?.[0];
  if (opts.commands) {
    if (command === undefined) return { kind: 'usage-error', text: `a command is required: ${opts.commands.join(', ')}\n${usage}\n` };
    if (!opts.commands.includes(command)) return { kind: 'usage-error', text: `unknown command ${command}\n${usage}\n` };
  }
  return { kind: 'run', parsed, command };
}

/** Where a command run as a function writes (its tests call it without a process). */
export interface CliOutput {
  out: (s: string) => void;
  err: (s: string) => void;
}

/**
 * A command line that does not run, for commands run as functions: the usage to `out` (exit 0),
 * or the usage error to `err` (exit 2).
 */
export function notRunExitCode(line: { kind: 'help' | 'usage-error'; text: string }, io: CliOutput): 0 | 2 {
  switch (line.kind) {
    case 'help':
      io.out(line.text);
      return 0;
    case 'usage-error':
      io.err(line.text);
      return 2;
    default: {
      const never: never = line.kind;
      throw new Error(`unknown command line kind ${String(never)}`);
    }
  }
}

/** A usage error found after parsing, for commands run as functions: the line and the usage to `err`, exit 2. */
export function usageErrorCode(line: string, usage: string, io: CliOutput): 2 {
  io.err(`${line}\n${usage}\n`);
  return 2;
}

/** A usage error found after parsing: the line, the usage, exit 2. */
export function usageExit(line: string, usage: string): never {
  process.stderr.write(`${line}\n${usage}\n`);
  process.exit(2);
}

/**
 * `readCommandLine` as every entry point wants it, before any side effect: `--help`/`-h` prints
 * the usage and exits 0; a usage error prints its line and the usage on stderr and exits 2.
 */
export function parseArgsOrExit<T extends HelpConfig>(config: T, usage: string, opts: { commands?: readonly string[] } = {}): Parsed<T> & { command: string | undefined } {
  const line = readCommandLine(config, usage, opts);
  switch (line.kind) {
    case 'help':
      process.stdout.write(line.text);
      process.exit(0);
    // eslint-disable-next-line no-fallthrough
    case 'usage-error':
      process.stderr.write(line.text);
      process.exit(2);
    // eslint-disable-next-line no-fallthrough
    case 'run':
      return { ...line.parsed, command: line.command };
  }
}
