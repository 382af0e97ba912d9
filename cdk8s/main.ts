// `npm run synth -- --env <dev|staging|prod> [--out <dir>]`, or `--env-file <file>` for an
// environment kept elsewhere (.ts with a default export, .yaml or .json: the shape of
// cdk8s/environments/*.ts and of the chart's values files). Writes one YAML file per tenant.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseArgsOrExit } from '../core/cli';
import { ENVIRONMENTS } from './environments';
import { KitInputError } from './lib/resolve';
import { synthEnvironment } from './synth';

const USAGE = `usage: npm run synth -- --env <${Object.keys(ENVIRONMENTS).join('|')}> [--out <dir>]
       npm run synth -- --env-file <file.ts|.yaml|.json> [--out <dir>]
  writes one <tenant>.yaml per tenant into --out (default dist/k8s/<environment>/)`;

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function loadFile(file: string): unknown {
  const full = path.resolve(file);
  if (/\.(ts|js)$/.test(full)) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(full) as { default?: unknown };
    return mod.default ?? mod;
  }
  const text = readFileSync(full, 'utf8');
  return full.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
}

const args = parseArgsOrExit(
  { options: { env: { type: 'string' }, 'env-file': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } }, strict: true },
  USAGE,
);
const { env, 'env-file': envFile } = args.values;
if (!env === !envFile) fail(`give --env or --env-file\n${USAGE}`, 2);

let input: unknown;
let source: string;
if (env) {
  if (!Object.hasOwn(ENVIRONMENTS, env)) fail(`unknown environment "${env}": ${Object.keys(ENVIRONMENTS).join(', ')}`, 2);
  input = ENVIRONMENTS[env];
  source = `cdk8s/environments/${env}.ts`;
} else {
  source = envFile!;
  try {
    input = loadFile(envFile!);
  } catch (err) {
    fail(`${envFile}: cannot read: ${(err as Error).message.split('\n')[0]}`);
  }
}

const started = Date.now();
let files;
try {
  files = synthEnvironment(input, source);
} catch (err) {
  if (err instanceof KitInputError) fail(`${err.source}:\n  ${err.problems.join('\n  ')}`);
  // cdk8s's construct validation (the settings catalog check): its own list of problems.
  if (err instanceof Error && err.message.startsWith('Validation failed')) fail(err.message);
  throw err;
}
const name = (input as { environment: string }).environment;
const out = path.resolve(args.values.out ?? path.join('dist', 'k8s', name));
// The directory holds this environment's output only: a removed tenant leaves no file behind.
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const f of files) {
  writeFileSync(path.join(out, f.name), f.yaml);
  process.stdout.write(`${path.relative(process.cwd(), path.join(out, f.name))}: ${f.tenant ? `tenant ${f.tenant}` : 'platform'}, ${f.objects.length} objects\n`);
}
process.stdout.write(`synthesized ${name} (${files.filter((f) => f.tenant).length} tenants) in ${Date.now() - started} ms\n`);
