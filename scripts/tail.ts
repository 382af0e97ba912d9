// `npm run tail -- [--port N] <channel>...`: prints a /ws channel's updates, one line each.
import WebSocket from 'ws';
import { parseArgsOrExit, usageExit } from '../core/cli';
import { splitChannel } from '../core/live/channels';

const USAGE = `usage: npm run tail -- [--port 3000] [--host localhost] <channel>...
  prints every message of the API's /ws channels, one line each, until Ctrl-C. Channels:
  market:<marketId> and orderbook:<marketId>, where <marketId> is the marketId field of
  GET /api/v1/markets (not its id or address), or current: the marketId of
  GET /api/v1/markets/current when tail starts. positions:<wallet> needs a signed subscription
  (api-reference/asyncapi.yaml). --port defaults to API_PORT (else 3000).`;

const { values, positionals } = parseArgsOrExit(
  {
    options: { port: { type: 'string', default: process.env.API_PORT || process.env.PORT || '3000' }, host: { type: 'string', default: 'localhost' }, help: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  },
  USAGE,
);
if (!positionals.length) usageExit('name at least one channel', USAGE);
const fail = (line: string): never => {
  process.stderr.write(`${line}\n`);
  process.exit(1);
};
// `tail … | head` closes the pipe: that ends tail quietly, not with an EPIPE stack.
process.stdout.on('error', () => process.exit(0));

/** `market:current` and `orderbook:current`: the current market's marketId, read once. */
async function resolveCurrent(channels: string[]): Promise<string[]> {
  if (!channels.some((c) => splitChannel(c)?.key === 'current')) return channels;
  const url = `http://${values.host}:${values.port}/api/v1/markets/current`;
  const res = await fetch(url).catch((err: Error) => fail(`GET ${url}: ${(err.cause as Error | undefined)?.message ?? err.message}`));
  const body = (await res.json().catch(() => undefined)) as { data?: { market?: { marketId?: string } } } | undefined;
  const marketId = body?.data?.market?.marketId;
  if (res.status !== 200 || !marketId) return fail(`GET ${url} answered ${res.status}: no current market to subscribe to yet`);
  return channels.map((c) => {
    const split = splitChannel(c);
    if (split?.key !== 'current') return c;
    process.stderr.write(`${c} is ${split.kind}:${marketId}\n`);
    return `${split.kind}:${marketId}`;
  });
}

void resolveCurrent(positionals).then((channels) => {
  const ws = new WebSocket(`ws://${values.host}:${values.port}/ws`);
  ws.on('open', () => channels.forEach((channel) => ws.send(JSON.stringify({ type: 'subscribe', channel }))));
  ws.on('message', (d) => process.stdout.write(`${d.toString()}\n`));
  ws.on('close', (code, reason) => {
    process.stderr.write(`closed ${code} ${reason.toString()}\n`);
    process.exit(code === 1000 ? 0 : 1);
  });
  ws.on('error', (err) => fail(err.message));
});
