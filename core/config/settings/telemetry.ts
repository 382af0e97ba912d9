/**
 * Traces: where spans are exported, the service name on them, and the OpenTelemetry SDK's
 * sampler (validated here, read by the SDK). Logs and metrics need no setting beyond `LOG_LEVEL`.
 */

import Joi from 'joi';
import { oneOf, spec, text, uri, type SettingSpec } from './kinds';
import { BOTH } from './readers';

export const TELEMETRY_SETTINGS = {
  OTEL_EXPORTER_OTLP_ENDPOINT: uri(['http', 'https'], {
    readBy: BOTH,
    description: 'OTLP/HTTP collector; traces are exported to `{endpoint}/v1/traces` only when set',
  }),
  OTEL_SERVICE_NAME: text(/^[A-Za-z0-9._-]{1,64}$/, 'service name', {
    defaultText: '`market-indexer-api` / `market-indexer-indexer`',
    readBy: BOTH,
    ruleText: 'letters, digits, `._-`',
    description: 'service name on exported spans',
  }),
  // Read by the OpenTelemetry SDK itself; validated here so a typo fails at start, not silently.
  OTEL_TRACES_SAMPLER: oneOf(
    ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const,
    {
      defaultText: 'the SDK\'s `parentbased_always_on`',
      readBy: BOTH,
      ruleText: 'an OpenTelemetry sampler name (`parentbased_traceidratio`, `always_off`, …)',
      description: 'which traces are kept; `parentbased_traceidratio` with `OTEL_TRACES_SAMPLER_ARG=0.1` keeps one in ten',
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: spec<string>(
    Joi.number().min(0).max(1).raw(),
    { type: 'number', minimum: 0, maximum: 1 },
    'number 0–1',
    { readBy: BOTH, description: 'the ratio of the `traceidratio` samplers' },
  ),
} as const satisfies Record<string, SettingSpec<any>>;
