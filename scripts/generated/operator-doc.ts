import { OPERATOR_PERMISSIONS, TENANT_BINDING, type NameRef, type Permission, type Scope } from '../../cdk8s/lib/operator-permissions';

const BEGIN = '<!-- permissions table: generated from cdk8s/lib/operator-permissions.ts by `npm run generate` -->';
const END = '<!-- end of permissions table -->';

/** The operator's RBAC as docs/operator.md shows it, one row per resource. */
export function permissionsTable(): string {
  const where: Record<Scope, string> = {
    cluster: 'cluster (ClusterRole `market-indexer-operator:<ns>`)',
    tenant: 'each tenant namespace (ClusterRole `market-indexer-operator-tenant:<ns>`, bound there by the operator)',
    platform: 'its own namespace (Role)',
  };
  const names: Record<NameRef, string> = { tenantClusterRole: '`market-indexer-operator-tenant:<ns>`', tenantBinding: `\`${TENANT_BINDING}\`` };
  const implied = (p: Permission) =>
    p.verbs.includes('bind') ? '; checked by the API server when the operator creates its binding, never requested' : '; checked by the API server for blockOwnerDeletion, never requested';
  const rows = OPERATOR_PERMISSIONS.map(
    (p) =>
      `| \`${p.group || 'core'}\` | \`${p.resource}\`${p.resourceNames ? ` ${names[p.resourceNames]} only` : ''} | ${p.verbs.join(', ')} | ${where[p.scope]}${p.implied ? implied(p) : ''} |`,
  );
  return [BEGIN, '| API group | Resource | Verbs | Where |', '|---|---|---|---|', ...rows, END].join('\n');
}

export function withPermissionsTable(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/operator.md lacks the markers ${BEGIN} … ${END}`);
  return doc.slice(0, start) + permissionsTable() + doc.slice(end + END.length);
}
