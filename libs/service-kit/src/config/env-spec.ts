import { z } from 'zod';

export interface EnvVariableSpec {
  name: string;
  /** False when the variable has a default (development) or is optional. */
  required: boolean;
  /** Whether production refuses the development default (a secret or a credential-bearing URL). */
  secret: boolean;
}

/**
 * Lists the variables a service's schema reads, for the `env-spec` command: deploy tests compare it
 * with docker-compose and the Kubernetes manifests so that no variable is forgotten or misspelt.
 */
export function describeEnv(schema: z.ZodTypeAny, secrets: readonly string[]): EnvVariableSpec[] {
  let inner: z.ZodTypeAny = schema;
  while (inner instanceof z.ZodEffects) inner = inner.innerType();
  if (!(inner instanceof z.ZodObject)) throw new Error('describeEnv expects an object schema');
  const shape = inner.shape as Record<string, z.ZodTypeAny>;
  return Object.entries(shape).map(([name, field]) => ({
    name,
    required: !(field.isOptional() || field instanceof z.ZodDefault),
    secret: secrets.includes(name),
  }));
}
