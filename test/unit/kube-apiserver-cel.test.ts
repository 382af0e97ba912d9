import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { compileCelRules, escapeProperty } from '../../local/kube-apiserver/crd-cel';
import { compileCrdSchema } from '../../local/kube-apiserver/crd-schema';
import type { Json } from '../../local/kube-apiserver/fields';

const ROOT = path.resolve(__dirname, '../..');
const httpRouteSchema = () => {
  const crd = parseAllDocuments(readFileSync(path.join(ROOT, 'cdk8s/crds/gateway.networking.k8s.io.yaml'), 'utf8'))[0]!.toJSON();
  return crd.spec.versions.find((v: { storage: boolean }) => v.storage).schema.openAPIV3Schema as Json;
};
const route = (parentRefs: Json[]): Json => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'r', namespace: 'mi-alpha' },
  spec: { parentRefs, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/ws' } }], backendRefs: [{ name: 'api', port: 80 }] }] },
});

describe("the test API server's CEL rules of a CRD", () => {
  // Through the whole admission (defaults first, as the real server: parentRefs' group and kind).
  const rules = { check: (obj: Json, old: Json | undefined) => compileCrdSchema(httpRouteSchema()).admit(obj, old) };

  it('admits a valid HTTPRoute, a parentRef namespace read through its escaped name', () => {
    expect(rules.check(route([{ name: 'gw', namespace: 'gateways' }]), undefined)).toEqual([]);
    expect(escapeProperty('namespace')).toBe('__namespace__');
    expect(escapeProperty('a-b.c/d__e')).toBe('a__dash__b__dot__c__slash__d__underscores__e');
  });

  it('refuses what a rule forbids, naming the field and the rule\'s message', () => {
    const errors = rules.check(route([{ name: 'gw', namespace: 'gateways' }, { name: 'gw', namespace: 'gateways' }]), undefined);
    expect(errors).toContainEqual({ field: 'spec.parentRefs', message: expect.stringContaining('sectionName must be unique when parentRefs includes 2 or more references to the same parent') });
  });

  it('evaluates rules through list items (has() through an index included)', () => {
    const r = route([{ name: 'gw' }]);
    ((r.spec as Json).rules as Json[])[0]!.filters = [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }];
    ((r.spec as Json).rules as Json[])[0]!.matches = [{ path: { type: 'Exact', value: '/ws' } }];
    const errors = rules.check(r, undefined);
    expect(errors.map((e) => e.field)).toContain('spec.rules[0]');
    expect(errors.map((e) => e.message).join('\n')).toContain('When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified');
  });

  it('refuses a CRD whose rule does not compile, naming the rule', () => {
    expect(() => compileCelRules({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a ==' }] })).toThrow(/compilation failed for rule "self.a =="/);
  });

  it('checks a transition rule against the stored object only', () => {
    const immutable = compileCelRules({ type: 'object', properties: { spec: { type: 'object', properties: { tenant: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'is immutable' }] } } } } });
    expect(immutable.check({ spec: { tenant: 'b' } }, undefined)).toEqual([]);
    expect(immutable.check({ spec: { tenant: 'b' } }, { spec: { tenant: 'a' } })).toEqual([{ field: 'spec.tenant', message: 'Invalid value: "b": is immutable' }]);
  });
});
