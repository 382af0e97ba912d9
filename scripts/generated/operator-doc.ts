import { OPERATOR_PERMISSIONS } from '../../cdk8s/lib/operator-permissions';

const BEGIN = '<!-- permissions table: generated from cdk8s/lib/operator-permissions.ts by `npm run generate` -->';
const END = '<!-- end of permissions table -->';

/** The operator's RBAC as docs/operator.md shows it, one row per resource. */
export function permissionsTable(): string {
  const rows = OPERATOR_PERMISSIONS.map(
    (p) => `| \`${p.group || 'core'}\` | \`${p.resource}\` | ${p.verbs.join(', ')} | ${p.namespaced ? 'its own namespace (Role)' : 'cluster (ClusterRole)'}${p.implied ? '; checked by the API server for blockOwnerDeletion, never requested' : ''} |`,
  );
  return [BEGIN, '| API group | Resource | Verbs | Where |', '|---|---|---|---|', ...rows, END].join('\n');
}

export function withPermissionsTable(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/operator.md lacks the markers ${BEGIN} … ${END}`);
  return doc.slice(0, start) + permissionsTable() + doc.slice(end + END.length);
}
