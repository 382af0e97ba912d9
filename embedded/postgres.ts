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
  const db = await PGlite.create(dir);
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
