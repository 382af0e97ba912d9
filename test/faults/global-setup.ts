import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import globalSetup from '../support/global-setup';

/** The main suite's setup (run id, template database), plus the file the scenarios report into. */
export default async function faultsSetup(): Promise<void> {
  await globalSetup();
  process.env.MI_FAULT_REPORT = path.join(mkdtempSync(path.join(os.tmpdir(), 'mi-faults-')), 'report.jsonl');
}
