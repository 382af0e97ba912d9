import { existsSync, readFileSync } from 'node:fs';
import globalTeardown from '../support/global-teardown';
import { formatTable, type FaultRow } from './support';

/** Prints the scenario table (scenario, requests, errors, data lost, recovery time), then cleans up. */
export default async function faultsTeardown(): Promise<void> {
  const file = process.env.MI_FAULT_REPORT;
  if (file && existsSync(file)) {
    const rows = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as FaultRow);
    process.stdout.write(`\nfault suite\n${formatTable(rows)}\n`);
  }
  await globalTeardown();
}
