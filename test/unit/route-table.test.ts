import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import Joi from 'joi';
import { routeTemplate } from '../../core/telemetry/http-span';
import type { Guards } from '../../server/routes/guards';
import { route, routeTable, type RouteDef } from '../../server/routes/table';

// The exact-path dispatch (D-172) against the router it stands in for: the same route, route
// template, parameters and failures, and only for the requests the router would give that route.
describe('route table: parameterless routes by exact path (D-172)', () => {
  let server: Server;
  let base: string;
  /** Requests the exact dispatch passed on to the router. */
  const passed: string[] = [];
  /** Access checks run, by route: each request runs its route's once. */
  const checks: string[] = [];

  interface Answer {
    name: string;
    params?: unknown;
  }
  const json = async (res: globalThis.Response) => (await res.json()) as Answer;
  const answer = (name: string) => async (req: Request, res: Response) => {
    res.json({ name, route: routeTemplate(req), params: req.params, query: req.query });
  };
  const def = (method: RouteDef['method'], path: string, name: string, extra: Partial<RouteDef> = {}): RouteDef =>
    route({ method, path, access: { by: 'ip', tier: 'public' }, query: Joi.object({ n: Joi.number() }), handler: answer(name), ...extra });

  beforeAll(async () => {
    const pass = (tag: string) => (req: Request, _res: Response, next: NextFunction) => {
      checks.push(`${tag} ${req.method} ${req.path}`);
      next();
    };
    const guards = { ip: () => pass('ip'), wallet: () => pass('wallet'), plan: () => pass('plan') } as unknown as Guards;
    const table = routeTable(
      '/p',
      [
        def('GET', '/a', 'a'),
        def('POST', '/a', 'post-a'),
        def('GET', '/b/:id', 'b-param', { params: Joi.object({ id: Joi.string() }) }),
        // Shadowed: the router gives /p/b/c to /b/:id, declared first.
        def('GET', '/b/c', 'b-c'),
        def('GET', '/fails', 'fails', {
          handler: async () => {
            throw new Error('handler failed');
          },
        }),
      ],
      guards,
    );
    const app = express();
    app.set('query parser', 'simple');
    app.use((req, res, next) =>
      table.exact(req, res, (err?: unknown) => {
        passed.push(`${req.method} ${req.url}`);
        next(err);
      }),
    );
    table.mount(app);
    app.use((_req: Request, res: Response) => void res.status(404).json({ name: 'not found' }));
    app.use((err: Error, req: Request, res: Response, _next: NextFunction) => void res.status(500).json({ error: err.message, route: routeTemplate(req) }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    passed.length = 0;
    checks.length = 0;
  });

  it('serves an exact path itself, with the route template and no parameters, as the router would', async () => {
    const res = await fetch(`${base}/p/a?n=2`);
    expect(await res.json()).toEqual({ name: 'a', route: '/p/a', params: {}, query: { n: '2' } });
    expect(passed).toEqual([]);
    expect(checks).toEqual(['ip GET /p/a']);
    // HEAD is the GET route's, without a body; POST is its own route.
    const head = await fetch(`${base}/p/a`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await json(await fetch(`${base}/p/a`, { method: 'POST' }))).name).toBe('post-a');
    expect(passed).toEqual([]);
  });

  it('leaves every other request to the router, which serves it as before', async () => {
    for (const [path, name] of [
      ['/p/a/', 'a'],
      ['/P/A', 'a'],
      ['/p/b/c', 'b-param'],
      ['/p/b/x', 'b-param'],
    ] as const) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect((await json(res)).name).toBe(name);
    }
    expect(passed).toEqual(['GET /p/a/', 'GET /P/A', 'GET /p/b/c', 'GET /p/b/x']);
    expect((await json(await fetch(`${base}/p/b/c`))).params).toEqual({ id: 'c' });
    // One access check per request: a request is never served twice.
    expect(checks.filter((c) => c.endsWith('/p/b/c'))).toHaveLength(2);
    expect((await fetch(`${base}/p/a`, { method: 'DELETE' })).status).toBe(404);
  });

  it('hands a failing handler to the error handlers, with the route known', async () => {
    const res = await fetch(`${base}/p/fails`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'handler failed', route: '/p/fails' });
    expect(passed).toEqual(['GET /p/fails']);
    expect(checks).toEqual(['ip GET /p/fails']);
  });
});
