// `npm run lock`: refreshes package-lock.json so `npm ci` accepts it on every platform.
//
// The registry this project is developed against serves only the Linux builds of packages that
// ship per-platform binaries (@swc/core-darwin-arm64 & co. answer 404), so npm leaves their
// entries out of the lock, and `npm ci` (npm 10 and 11) then refuses the lock as out of sync
// with package.json. This adds each missing optional dependency back as npm itself would write
// it: its exact version, `optional`, `dev` as its parent's, and the os/cpu/libc its name states
// (the convention of every such package here). No `resolved` or `integrity` (the project omits
// `resolved` anyway): elsewhere npm fetches them by version from the registry; here npm skips
// them for their os/cpu, never fetching. Run with --check to fail when the lock needs it.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'loong64', 'riscv64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return undefined;
  const libc = parts.includes('musl') || parts.includes('musleabihf') ? 'musl' : parts.includes('gnu') || parts.includes('gnueabihf') ? 'glibc' : undefined;
  return { os: [os], cpu: [cpu], ...(os === 'linux' && libc ? { libc: [libc] } : {}) };
}

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const added = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ''}node_modules/${dep}`;
    if (packages[nested] || packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) continue;
    packages[`node_modules/${dep}`] = { version: spec, ...(entry.dev ? { dev: true } : {}), optional: true, ...platform };
    added.push(`${dep}@${spec}`);
  }
}
if (process.argv.includes('--check')) {
  if (added.length) {
    process.stderr.write(`package-lock.json lacks ${added.length} platform package(s) npm ci needs (${added.slice(0, 3).join(', ')}…): run npm run lock\n`);
    process.exit(1);
  }
  process.stdout.write('package-lock.json: complete\n');
} else {
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(file, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
  process.stdout.write(added.length ? `added ${added.length} platform package(s) to package-lock.json\n` : 'package-lock.json: complete\n');
}
