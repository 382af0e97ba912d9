// `npm run tail -- [--port N] <channel>...`: prints a /ws channel's updates, one line each.
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values, positionals } = parseArgs({ options: { port: { type: 'string', default: process.env.API_PORT || process.env.PORT || '3000' }, host: { type: 'string', default: 'localhost' } }, allowPositionals: true });
if (!positionals.length) {
  process.stderr.write('usage: npm run tail -- [--port 3000] [--host localhost] market:<id> | orderbook:<id> ...\n');
  process.exit(2);
}
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
