import { createHash, randomBytes } from 'node:crypto';
import { tenantAclRules, tenantAclUser } from '../../core/redis/acl';

/**
 * A tenant's Redis ACL user as the kit writes it (D-193, D-231): the rules are
 * `tenantAclRules` (core/redis/acl.ts), the one definition the API was tested with; this only
 * adds the user name and the password, in the two forms Redis reads: a line of an ACL file
 * (`user mi-<tenant> …`, the dev Redis's `--aclfile`) and a command (`ACL SETUSER mi-<tenant> …`,
 * for a Redis an operator runs, printed by `npm run redis-acl`).
 */

/** A password as an ACL rule holds it: in clear (`>pw`), or only its SHA-256 (`#hex`), so the rule can be kept without the secret. */
export type AclPassword = { cleartext: string } | { sha256: string };

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

const passwordRule = (p: AclPassword) => ('cleartext' in p ? `>${p.cleartext}` : `#${p.sha256}`);

/** For a Redis Cluster, the commands its client needs to find the slots (`CLUSTER_ACL_COMMANDS`). */
export interface AclOptions {
  cluster?: boolean;
}

/** The tenant's user and its rules, then the password (after `reset on`, where Redis takes it). */
const userAndRules = (tenant: string, password: AclPassword, opts: AclOptions) => [tenantAclUser(tenant), ...tenantAclRules(tenant, opts), passwordRule(password)].join(' ');

/** A line of an ACL file (`aclfile`, or `user` lines of redis.conf). */
export const tenantAclFileLine = (tenant: string, password: AclPassword, opts: AclOptions = {}) => `user ${userAndRules(tenant, password, opts)}`;

/** The same user as a command for redis-cli, run by an admin of the Redis. */
export const tenantAclCommand = (tenant: string, password: AclPassword, opts: AclOptions = {}) => `ACL SETUSER ${userAndRules(tenant, password, opts)}`;

/** A password for a tenant's user: 32 random bytes, hex, so it needs no escaping in a URL or an ACL rule. */
export const newAclPassword = () => randomBytes(32).toString('hex');
