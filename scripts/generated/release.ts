import { RELEASE_VERSION } from '../../core/release';

/**
 * The places a release's version is written besides package.json (D-310): the chart's `version`
 * and `appVersion`, its default image tag, and the archive `helm package` names after the chart's
 * version in the commands the docs give. `npm run generate` rewrites them from package.json.
 */

const SEMVER = String.raw`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`;

export function chartYamlWithVersion(text: string, version = RELEASE_VERSION): string {
  return text.replace(/^version: .*$/m, `version: ${version}`).replace(/^appVersion: .*$/m, `appVersion: "${version}"`);
}

/** The `image:` block's `tag:` (values.yaml, and the chart README's example values file). */
export function imageTagWithVersion(text: string, version = RELEASE_VERSION): string {
  return text.replace(new RegExp(`(^image:\\n(?:[ ]{2}.*\\n)*?[ ]{2}tag: )${SEMVER}$`, 'm'), `$1${version}`);
}

/** `dist/chart/market-indexer-<version>.tgz`, what `helm package` writes. */
export function chartArchiveWithVersion(text: string, version = RELEASE_VERSION): string {
  return text.replace(new RegExp(`market-indexer-${SEMVER}\\.tgz`, 'g'), `market-indexer-${version}.tgz`);
}
