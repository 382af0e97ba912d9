import { SETTING_NAMES, settingSpec, type ProcessName } from '../../core/config/settings';

export const BEGIN = '<!-- settings table: generated from core/config/settings.ts by `npm run generate` -->';
export const END = '<!-- end of settings table -->';

const PROCESS_LABEL: Record<ProcessName, string> = { api: 'API', indexer: 'indexer', embedded: '`npm start`', migrate: 'migrate', operator: 'operator', chain: 'chain' };

function defaultCell(name: (typeof SETTING_NAMES)[number]): string {
  const s = settingSpec(name);
  if (s.defaultText) return s.defaultText;
  return s.default === undefined ? 'unset' : `\`${String(s.default)}\``;
}

/** The settings table of docs/configuration.md, one row per catalog entry. */
export function settingsTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const s = settingSpec(name);
    const readers = s.readBy.map((p) => PROCESS_LABEL[p]).join(', ');
    return `| \`${name}\` | ${defaultCell(name)} | ${s.ruleText} | ${readers} | ${s.secret ? 'yes' : ''} | ${s.description} |`;
  });
  return [
    BEGIN,
    '| Setting | Default | Rule | Read by | Secret | Meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
    END,
  ].join('\n');
}

/** Replaces the table between the markers of an existing document. */
export function withSettingsTable(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the markers ${BEGIN} … ${END}`);
  return doc.slice(0, start) + settingsTable() + doc.slice(end + END.length);
}
