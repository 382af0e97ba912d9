import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The release this checkout (or image) is: package.json's `version`, the one place it is written
 * (docs/deploy.md#releasing). The kit renders it as the image tag, the chart's `version` and
 * `appVersion` are generated from it (`npm run generate`), and CHANGELOG.md's newest entry names it.
 */
export const RELEASE_VERSION = packageVersion();

/** The nearest package.json of this package, from the sources or from dist/ in the image. */
function packageVersion(): string {
  for (let dir = __dirname, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'market-indexer' && pkg.version) return pkg.version;
  }
  return 'unknown';
}
