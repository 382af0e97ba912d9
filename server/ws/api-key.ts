import type http from 'node:http';
import { WS_API_KEY_PROTOCOL_PREFIX, WS_SUBPROTOCOL } from './protocol';

/**
 * The API key of an appendix-variant upgrade (D-158, D-191): the `X-API-Key` header; else a
 * `Sec-WebSocket-Protocol` offer `apikey.<key>` (browsers can set that header), which must come
 * with an offer of `market-indexer` (the one the server selects, so the key is not echoed); else
 * the `apiKey` query parameter, which proxies write into their access logs with the URL.
 */
export function upgradeApiKey(req: http.IncomingMessage): { ok: true; apiKey: string | undefined } | { ok: false; error: string } {
  const header = req.headers['x-api-key'];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader !== undefined) return { ok: true, apiKey: fromHeader };
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const carried = offered.find((p) => p.startsWith(WS_API_KEY_PROTOCOL_PREFIX));
  if (carried !== undefined) {
    if (!offered.includes(WS_SUBPROTOCOL)) {
      return { ok: false, error: `Offer the ${WS_SUBPROTOCOL} subprotocol with ${WS_API_KEY_PROTOCOL_PREFIX}<key> (Sec-WebSocket-Protocol)` };
    }
    return { ok: true, apiKey: carried.slice(WS_API_KEY_PROTOCOL_PREFIX.length) };
  }
  return { ok: true, apiKey: new URL(req.url ?? '/', 'http://x').searchParams.get('apiKey') ?? undefined };
}

