import { Resource, RESOURCE_MANIFEST, RESOURCES } from '../manifest';

/** List filters per resource (docs/api.md section 7), from the manifest. The services' definitions must match these names. */
export const LIST_FILTERS = Object.fromEntries(
  RESOURCES.map((r): [Resource, Record<string, Record<string, unknown>>] => [r, RESOURCE_MANIFEST[r].filters]),
) as Record<Resource, Record<string, Record<string, unknown>>>;

/** An OpenAPI 3.1 query parameter. */
export interface QueryParameter {
  name: string;
  in: 'query';
  description?: string;
  style?: 'form';
  explode?: boolean;
  schema: Record<string, unknown>;
}

/**
 * The resource's filters as the list operation's query parameters, in the manifest's order: the
 * value's description becomes the parameter's, and a list value is comma-separated
 * (`style: form, explode: false`: `status=open,paid`).
 */
export function listFilterParameters(resource: Resource): QueryParameter[] {
  return Object.entries(LIST_FILTERS[resource]).map(([name, { description, ...schema }]) => ({
    name,
    in: 'query',
    ...(typeof description === 'string' ? { description } : {}),
    ...(schema.type === 'array' ? { style: 'form', explode: false } : {}),
    schema,
  }));
}
