import { createApp } from '../../server/app';
import { createApiStores } from '../../server/stores';
import { serve } from '../support/api';
import { testCommon } from '../support/common';
import { projectionDb, type ProjectionDb } from '../support/indexer';

/**
 * CORS (D-521) over real HTTP: preflights answered from the allow-list, public reads open to
 * any origin, the wallet and API-key headers only for listed origins, the rate-limit headers a
 * page's script may read, and no credentials mode ever.
 */
const APP = 'https://app.example';
const ELSEWHERE = 'https://elsewhere.example';
const SIGNED = 'x-wallet-pubkey,x-wallet-signature,x-wallet-message';

describe('CORS', () => {
  let p: ProjectionDb;
  let api: { url: string; close(): Promise<void> };
  let tight: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    p = await projectionDb();
    const common = testCommon({ CORS_ALLOWED_ORIGINS: `${APP},http://localhost:5173`, PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000', RATE_LIMIT_MAX_REQUESTS: '100000' });
    api = await serve(createApp({ common, db: p.database.db, ...createApiStores(common, undefined) }));
    const strict = testCommon({ PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '1' });
    tight = await serve(createApp({ common: strict, db: p.database.db, ...createApiStores(strict, undefined) }));
  });
  afterAll(async () => {
    await api.close();
    await tight.close();
    await p.close();
  });

  const preflight = (url: string, origin: string, method: string, headers: string) =>
    fetch(url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers } });
  const list = (v: string | null) => (v ?? '').toLowerCase().split(/\s*,\s*/).filter(Boolean);

  it('answers a listed origin\'s preflight for a signed POST: the origin reflected, the wallet and API-key headers allowed, no credentials mode', async () => {
    const r = await preflight(`${api.url}/api/v1/tx/place-order`, APP, 'POST', `${SIGNED},content-type,x-api-key`);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    expect(list(r.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['get', 'post']));
    expect(list(r.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining([...SIGNED.split(','), 'x-api-key', 'content-type', 'if-none-match']));
    expect(list(r.headers.get('vary'))).toContain('origin');
    expect(r.headers.get('access-control-max-age')).toBe('600');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets any origin read the public routes, and names the headers its script may read', async () => {
    const r = await fetch(`${api.url}/api/v1/config`, { headers: { Origin: ELSEWHERE } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(r.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-request-id', 'etag', 'date']),
    );
    expect(list(r.headers.get('vary'))).toContain('origin');
    // A conditional read needs a preflight (If-None-Match is not safelisted): any origin passes it.
    const pre = await preflight(`${api.url}/api/v1/markets`, ELSEWHERE, 'GET', 'if-none-match');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(pre.headers.get('access-control-allow-headers'))).toContain('if-none-match');
  });

  it("refuses an unlisted origin's preflight for the wallet headers: none of them allowed, no POST", async () => {
    const r = await preflight(`${api.url}/api/v1/positions`, ELSEWHERE, 'GET', SIGNED);
    // The browser refuses the request: the headers it asked for are not in the answer.
    expect(list(r.headers.get('access-control-allow-headers'))).not.toEqual(expect.arrayContaining(['x-wallet-message']));
    expect(list(r.headers.get('access-control-allow-headers'))).not.toContain('x-api-key');
    const post = await preflight(`${api.url}/api/v1/tx/place-order`, ELSEWHERE, 'POST', 'content-type');
    expect(list(post.headers.get('access-control-allow-methods'))).not.toContain('post');
    expect(list(post.headers.get('access-control-allow-headers'))).not.toContain('content-type');
  });

  it('without an allow-list, no origin may send the wallet headers', async () => {
    const r = await preflight(`${tight.url}/api/v1/positions`, APP, 'GET', SIGNED);
    expect(list(r.headers.get('access-control-allow-headers'))).not.toContain('x-wallet-message');
  });

  it('exposes Retry-After on a 429 a page receives', async () => {
    // The tight API's public-read tier allows one request a window: the second is refused.
    let r: Response | undefined;
    for (let i = 0; i < 3 && r?.status !== 429; i++) r = await fetch(`${tight.url}/api/v1/config`, { headers: { Origin: ELSEWHERE } });
    expect(r!.status).toBe(429);
    expect(r!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(r!.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(r!.headers.get('access-control-expose-headers'))).toContain('retry-after');
  });
});
