import { Resource, RESOURCE_MANIFEST, RESOURCES } from '../manifest';

/** List filters per resource (docs/api.md section 7), from the manifest. The services' definitions must match these names. */
export const LIST_FILTERS = Object.fromEntries(RESOURCES.map((r) => [r, RESOURCE_MANIFEST[r].filters])) as Record<
  Resource,
  Record<string, Record<string, unknown>>
>;
