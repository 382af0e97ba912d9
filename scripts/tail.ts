// `npm run tail -- [--port N] <channel>...`: prints a /ws channel's updates, one line each.
import WebSocket from 'ws';
import { parseArgsOrExit, usageExit } from '../core/cli';

const USAGE = `usage: npm run tail -- [--port 3000] [--host localhost] <channel>...
  prints every message of the API's /ws channels, one line each, until Ctrl-C. Channels:
  market:<address> or orderbook:<address> (the address field of GET /api/v1/markets), trades, oracle
  (api-reference/asyncapi.yaml lists them all). --port defaults to API_PORT (else 3000).`;

const { values, positionals } = parseArgsOrExit(
  {
    options: { port: { type: 'string', default: process.env.API_PORT || process.env.PORT || '3000' }, host: { type: 'string', default: 'localhost' }, help: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  },
  USAGE,
);
if (!positionals.length) usageExit('name at least one channel', USAGE);
const ws = new WebSocket(`ws://${values.host}:${values.port}/ws`);
ws.on('open', () => positionals.forEach((channel) => ws.send(JSON.stringify({ type: 'subscribe', channel }))));
ws.on('message', (d) => process.stdout.write(`${d.toString()}\n`));
ws.on('close', (code, reason) => {
  process.stderr.write(`closed ${code} ${reason.toString()}\n`);
  process.exit(code === 1000 ? 0 : 1);
});
ws.on('error', (err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
