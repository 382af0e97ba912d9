import { existsSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** A `postgres://` URL for the production pg-promise, node-pg-migrate and pg code. */
  url: string;
  close(): Promise<void>;
}

/**
 * PostgreSQL in process: PGlite (PostgreSQL compiled to WASM) keeping its files in `dir`,
 * served on a loopback port through pglite-socket so every query goes through the same
 * drivers as in production. `maxConnections` must exceed 1 for a pool (with 1 a second
 * connection is cut off); PGlite runs the connections' queries one at a time, keeping a
 * transaction's queries together, over one session, so session advisory locks are shared by
 * the whole process, which is right for a single writer in a single process.
 */
export async function startEmbeddedPostgres(dir: string): Promise<EmbeddedPostgres> {
  // Measured here (RSS): a first start, which runs initdb in the same process, 783 MB with the
  // default 128 MB shared_buffers; a restart 330 MB; a restart with 16 MB shared_buffers 219 MB.
  // The demo's tables are small, and initdb's memory is only returned once that instance closes.
  const options = { postgresqlconf: "shared_buffers = '16MB'" };
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await (await PGlite.create(dir, options)).close();
  const db = await PGlite.create(dir, options);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 });
  await server.start();
  const conn = server.getServerConn(); // "127.0.0.1:<port>"
  return {
    url: `postgres://postgres@${conn}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
