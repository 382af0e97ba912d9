import type { EnvironmentInput } from '../lib/values';
import dev from './dev';
import prod from './prod';
import staging from './staging';

/** The environments `npm run synth -- --env <name>` knows. */
export const ENVIRONMENTS: Record<string, EnvironmentInput> = { dev, staging, prod };
