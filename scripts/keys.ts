// `npm run keys -- create|revoke|list --tenant <t> ...`: a tenant's API keys (scripts/keys-cli.ts).
import { createApiKeyStore } from '../core/api-keys';
import { loadConfigOrExit } from '../core/config';
import { createDatabase } from '../core/db';
import { migrate } from '../core/db/migrate';
import { parseKeysCommand, runKeysCli } from './keys-cli';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  // The whole command line is checked before the database is touched.
  const parsed = parseKeysCommand(argv);
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.kind === 'usage-error') {
    process.stderr.write(parsed.text);
    return 2;
  }
  const config = loadConfigOrExit({ ...process.env, LOG_LEVEL: 'silent' });
  if (!config.databaseUrl) {
    process.stderr.write('npm run keys needs DATABASE_URL (the tenant\'s database)\n');
    return 1;
  }
  await migrate({ databaseUrl: config.databaseUrl });
  const database = createDatabase({ url: config.databaseUrl, poolMax: 1, applicationName: 'market-indexer-keys' });
  try {
    return await runKeysCli(argv, {
      store: () => createApiKeyStore(database.db),
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
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
