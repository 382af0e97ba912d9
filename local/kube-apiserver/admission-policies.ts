/**
 * ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) as kube-apiserver applies them to
 * a write: every ValidatingAdmissionPolicyBinding whose policy exists and whose `validationActions`
 * include Deny; the policy's `matchConstraints.resourceRules` (API group, version, operation,
 * resource, `*` wildcards), then its `matchConditions` (all must hold), then its `validations`, each
 * a CEL expression over `object`, `oldObject`, `request` (`operation`, `userInfo`, `namespace`,
 * `name`, `resource`) and `namespaceObject`, with the policy's `variables`. The first validation
 * that is false refuses the write with its `reason` (Invalid, 422, by default) and the message
 * kube-apiserver gives; an expression that fails to compile or to evaluate refuses it under
 * `failurePolicy: Fail` (the default) and is skipped under Ignore. CEL by @marcbachmann/cel-js.
 *
 * Not modelled, and refused loudly (500 naming the field) rather than applied wrongly: params
 * (`paramKind`, `paramRef`), namespace and object selectors, `excludeResourceRules`,
 * `messageExpression`. An expression using the `authorizer` variable fails to evaluate (so
 * refuses under Fail). Not evaluated: DELETE and CONNECT operations, audit annotations and the
 * Warn and Audit actions (they never refuse a write).
 */
import { parse } from '@marcbachmann/cel-js';
import type { FieldError } from './crd-schema';
import { ApiError, invalid } from './errors';
import type { Json } from './fields';
import type { Identity, RequestRecord } from './rbac';
import type { Store } from './store';

const GROUP = 'admissionregistration.k8s.io';

/** The identity of a client the RBAC authorizer does not know, or of every client without one. */
export const UNRESTRICTED: Identity = { user: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

type Compiled = (ctx: Record<string, unknown>) => unknown;

interface ResourceRule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
}

const REASONS: Record<string, number> = { Invalid: 422, Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413 };

export interface PolicyAdmission {
  /** True when a write of `plural` in `group` needs its object previewed: a policy itself, or anything while some binding exists. */
  concerns(group: string, plural: string): boolean;
  /** Throws when a policy bound with Deny refuses the write of `obj` (`old`: the live object, for an update). */
  admit(r: RequestRecord, who: Identity, obj: Json, old: Json | undefined): void;
}

export function createPolicyAdmission(store: Store): PolicyAdmission {
  const compiled = new Map<string, Compiled>();
  const compile = (expression: string): Compiled => {
    let c = compiled.get(expression);
    if (!c) {
      c = parse(expression) as unknown as Compiled;
      compiled.set(expression, c);
    }
    return c;
  };

  /** As the real server validates a policy: every expression must compile, or the policy is Invalid (422) naming it. */
  const checkPolicy = (policy: Json) => {
    const spec = (policy.spec ?? {}) as Json;
    const problems: FieldError[] = [];
    for (const field of ['matchConditions', 'validations', 'variables'] as const) {
      ((spec[field] as { expression?: string }[] | undefined) ?? []).forEach((e, i) => {
        try {
          compile(e.expression ?? '');
        } catch (err) {
          problems.push({ field: `spec.${field}[${i}].expression`, message: `Invalid value: "${e.expression}": compilation failed: ${(err as Error).message.split('\n')[0]}` });
        }
      });
    }
    if (problems.length) throw invalid(types().policies!, (policy.metadata as Json).name as string, problems);
  };

  const notModelled = (what: string, name: string) => {
    throw new ApiError(500, 'InternalError', `the test API server does not model ${what} (ValidatingAdmissionPolicy "${name}")`);
  };
  const has = (list: string[] | undefined, v: string) => (list ?? []).includes('*') || (list ?? []).includes(v);
  const matches = (rules: ResourceRule[], r: RequestRecord, version: string, operation: string) =>
    rules.some((rule) => has(rule.apiGroups, r.group) && has(rule.apiVersions, version) && has(rule.operations, operation) && has(rule.resources, r.resource));
  const nonEmpty = (o: unknown) => o !== undefined && o !== null && Object.keys(o as object).length > 0;

  const types = () => ({
    policies: store.allTypes().find((t) => t.group === GROUP && t.plural === 'validatingadmissionpolicies'),
    bindings: store.allTypes().find((t) => t.group === GROUP && t.plural === 'validatingadmissionpolicybindings'),
  });

  return {
    concerns(group, plural) {
      if (group === GROUP && plural === 'validatingadmissionpolicies') return true;
      const { bindings } = types();
      return !!bindings && store.list(bindings, undefined, []).length > 0;
    },
    admit(r, who, obj, old) {
      if (r.group === GROUP && r.resource === 'validatingadmissionpolicies') checkPolicy(obj);
      const { policies, bindings } = types();
      if (!policies || !bindings) return;
      const operation = old ? 'UPDATE' : 'CREATE';
      const version = ((obj.apiVersion as string | undefined) ?? '').split('/').pop() ?? '';
      const meta = obj.metadata as Json;
      const namespace = meta.namespace as string | undefined;
      const namespaceObject = namespace ? (store.find(store.typeOf('', 'v1', 'namespaces'), undefined, namespace) ?? null) : null;
      const request = {
        operation,
        userInfo: { username: who.user, groups: who.groups },
        namespace: namespace ?? '',
        name: (meta.name as string | undefined) ?? '',
        resource: { group: r.group, version, resource: r.resource.split('/')[0] },
        subResource: r.resource.split('/')[1] ?? '',
        dryRun: false,
      };
      for (const binding of store.list(bindings, undefined, [])) {
        const bspec = (binding.spec ?? {}) as Json;
        if (!((bspec.validationActions as string[] | undefined) ?? []).includes('Deny')) continue;
        const policy = store.find(policies, undefined, bspec.policyName as string);
        // A binding of a policy that does not exist is ignored, as the real server does.
        if (!policy) continue;
        const name = (policy.metadata as Json).name as string;
        const bindingName = (binding.metadata as Json).name as string;
        const spec = (policy.spec ?? {}) as Json;
        const constraints = (spec.matchConstraints ?? {}) as Json;
        if (spec.paramKind || bspec.paramRef) notModelled('params', name);
        for (const f of ['namespaceSelector', 'objectSelector', 'excludeResourceRules'] as const) {
          if (nonEmpty(constraints[f]) || nonEmpty((bspec.matchResources as Json | undefined)?.[f])) notModelled(f, name);
        }
        if (nonEmpty((bspec.matchResources as Json | undefined)?.resourceRules)) notModelled('a binding\'s resourceRules', name);
        if (!matches((constraints.resourceRules as ResourceRule[] | undefined) ?? [], r, version, operation)) continue;
        const ignore = spec.failurePolicy === 'Ignore';
        // Plain objects of this realm: the interpreter takes only those, and the store's come from
        // structuredClone, which under Jest's VM contexts makes objects of another realm.
        const plain = <T>(v: T): T => (v === null || v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
        const ctx: Record<string, unknown> = { object: plain(obj), oldObject: plain(old) ?? null, request, namespaceObject: plain(namespaceObject), params: null };
        const refuse = (reason: string, message: string): never => {
          const text = `ValidatingAdmissionPolicy '${name}' with binding '${bindingName}' denied request: ${message}`;
          const plural = r.resource.split('/')[0]!;
          const what = `${plural}${r.group ? `.${r.group}` : ''} "${request.name}"`;
          // As kube-apiserver builds it (admission.NewForbidden, then the validation's reason and
          // its code): "is forbidden" whatever the reason, the text again as the one cause, which
          // kubectl prints as `The <resource> "<name>" is invalid: : <text>` for Invalid.
          throw new ApiError(REASONS[reason] ?? 422, reason, `${what} is forbidden: ${text}`, {
            name: request.name,
            ...(r.group ? { group: r.group } : {}),
            kind: plural,
            causes: [{ message: text }],
          });
        };
        /** An expression's value; an error refuses the write unless the policy says Ignore (then undefined). */
        const evaluate = (expression: string, vars: Record<string, unknown> = ctx): unknown => {
          try {
            return compile(expression)(vars);
          } catch (err) {
            if (ignore) return undefined;
            return refuse('Invalid', `expression '${expression}' resulted in error: ${(err as Error).message.split('\n')[0]}`);
          }
        };
        const variables: Record<string, unknown> = {};
        for (const v of (spec.variables as { name: string; expression: string }[] | undefined) ?? []) variables[v.name] = evaluate(v.expression, { ...ctx, variables });
        ctx.variables = variables;
        const conditions = (spec.matchConditions as { name: string; expression: string }[] | undefined) ?? [];
        if (!conditions.every((c) => evaluate(c.expression) === true)) continue;
        for (const v of (spec.validations as { expression: string; message?: string; messageExpression?: string; reason?: string }[] | undefined) ?? []) {
          if (v.messageExpression) notModelled('messageExpression', name);
          const ok = evaluate(v.expression);
          if (ok === true || ok === undefined) continue;
          refuse(v.reason ?? 'Invalid', v.message ?? `failed expression: ${v.expression}`);
        }
      }
    },
  };
}
