import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/generated';
import { decisionsIndex, parseDecisions, withDecisionsIndex } from '../../scripts/generated/decisions-index';

const doc = (entries: string) => `# Decisions\n\nIntro.\n\n## Entries\n\n${entries}`;
const entry = (id: string, title: string, status = 'accepted', topic = 'indexer') => `### ${id} ${title}\n**Status:** ${status} · **Topic:** ${topic}\n\nText.\n`;

describe('the decisions index (scripts/generated/decisions-index.ts)', () => {
  it('indexes an appended entry by its topic, linked to its heading, with its supersession', () => {
    const text = withDecisionsIndex(doc([entry('D-1', 'One `thing` (2.2)', 'superseded by [D-300](#d-300-a-title-of-a-few-words)', 'api'), entry('D-300', 'A title of a few words')].join('\n')));
    expect(text).toContain('- [D-300 A title of a few words](#d-300-a-title-of-a-few-words)');
    expect(text).toContain('- [D-1 One `thing` (2.2)](#d-1-one-thing-22) (superseded by [D-300](#d-300-a-title-of-a-few-words))');
    expect(text.indexOf('### api')).toBeLessThan(text.indexOf('### indexer'));
    expect(withDecisionsIndex(text)).toBe(text);
  });

  it('refuses an entry of another shape, naming it', () => {
    expect(() => decisionsIndex(doc('**D-5 Bold.** text\n'))).toThrow(/D-5 Bold/);
    expect(() => decisionsIndex(doc('### D-6 No status\n\ntext\n'))).toThrow(/D-6 must be followed by/);
    expect(() => decisionsIndex(doc(entry('D-7', 'Odd topic', 'accepted', 'misc')))).toThrow(/D-7 has topic "misc"/);
    expect(() => decisionsIndex(doc(entry('D-8', 'Gone', 'superseded by [D-9](#d-9)')))).toThrow(/D-8 is superseded by D-9, which has no entry/);
    expect(() => decisionsIndex(doc(entry('D-10', 'A') + '\n' + entry('D-10', 'B')))).toThrow(/D-10 appears twice/);
  });

  it('reads every entry of docs/decisions.md, and the superseded ones point forward', () => {
    const decisions = parseDecisions(readFileSync(path.join(ROOT, 'docs/decisions.md'), 'utf8'));
    expect(decisions.length).toBeGreaterThan(200);
    for (const d of decisions.filter((x) => x.supersededBy)) expect(Number(d.supersededBy!.slice(2))).toBeGreaterThan(Number(d.id.slice(2)));
  });
});
