// `npm run migrate`: applies pending migrations to DATABASE_URL and says what it did.
import { parseArgsOrExit } from '../cli';
import { loadConfigOrExit } from '../config';
import { migrate } from './migrate';

const USAGE = `usage: npm run migrate
  applies the pending migrations (db/migrations) to DATABASE_URL (postgres://user@host:5432/dbname)
  and says what it applied. No options besides --help.`;

async function main(): Promise<void> {
  parseArgsOrExit({ options: { help: { type: 'boolean' } }, strict: true }, USAGE);
  const config = loadConfigOrExit();
  if (!config.databaseUrl) {
    process.stderr.write('npm run migrate needs DATABASE_URL (postgres://user@host:5432/dbname)\n');
    process.exit(1);
  }
  const { applied } = await migrate({ databaseUrl: config.databaseUrl });
  process.stdout.write(
    applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n` : 'schema is up to date\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
