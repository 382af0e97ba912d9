// `npm run keys -- create|revoke|list --tenant <t> ...`: a tenant's API keys (scripts/keys-cli.ts).
import { createApiKeyStore } from '../core/api-keys';
import { loadConfigOrExit } from '../core/config';
import { createDatabase } from '../core/db';
import { migrate } from '../core/db/migrate';
import { KEYS_USAGE, runKeysCli } from './keys-cli';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.length === 0) {
    process.stdout.write(`${KEYS_USAGE}\n`);
    return argv.length ? 0 : 2;
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
