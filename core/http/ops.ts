import { Router, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import { OPS_PATHS } from '../constants';

/** A probe's answer: the status the kubelet acts on and the body a person reads. */
export interface ProbeAnswer {
  status: number;
  body: unknown;
}

/**
 * The operational endpoints both processes serve on their root, unversioned and never rate
 * limited (a kubelet must never see a 429): each process decides what healthy and ready mean
 * for it, this module only how they are answered.
 */
export interface OpsEndpoints {
  health(): Promise<ProbeAnswer>;
  ready(): Promise<ProbeAnswer>;
  registry: Registry;
}

/** The method and path of every operational endpoint, for a process's 405 answers. */
export const OPS_ROUTES = Object.values(OPS_PATHS).map((path) => ({ method: 'GET' as const, path }));

export function opsRouter(ops: OpsEndpoints): Router {
  const r = Router();
  const answer = (probe: () => Promise<ProbeAnswer>) => async (_req: Request, res: Response) => {
    const { status, body } = await probe();
    res.status(status).json(body);
  };
  r.get(OPS_PATHS.health, answer(ops.health));
  r.get(OPS_PATHS.ready, answer(ops.ready));
  r.get(OPS_PATHS.metrics, async (_req, res) => {
    res.type(ops.registry.contentType).send(await ops.registry.metrics());
  });
  return r;
}
