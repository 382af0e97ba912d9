// `npm run keys -- create|revoke|list --tenant <t> ...`: a tenant's API keys (scripts/keys-cli.ts).
import { createApiKeyStore } from '../core/api-keys';
import { loadConfigOrExit } from '../core/config';
import { createDatabase } from '../core/db';
import { migrate } from '../core/db/migrate';
import { notRunExitCode } from '../core/cli';
import { parseKeysCommand, runKeysCli } from './keys-cli';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  // The whole command line is checked before the database is touched.
  const io = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s) };
  const parsed = parseKeysCommand(argv);
  if (parsed.kind !== 'run') return notRunExitCode(parsed, io);
  const config = loadConfigOrExit({ ...process.env, LOG_LEVEL: 'silent' });
  if (!config.databaseUrl) {
    process.stderr.write('npm run keys needs DATABASE_URL (the tenant\'s database)\n');
    return 1;
  }
  await migrate({ databaseUrl: config.databaseUrl });
  const database = createDatabase({ url: config.databaseUrl, poolMax: 1, applicationName: 'market-indexer-keys' });
  try {
    return await runKeysCli(argv, {
      ...io,
      store: () => createApiKeyStore(database.db),
    });
  } finally {
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`keys: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
