import { toPublicId } from '@invoicing/contracts';

/** An endpoint row as the queries select it. */
export interface EndpointRow {
  id: string;
  organization_id: string;
  url: string;
  description: string | null;
  enabled_events: string[];
  status: 'enabled' | 'disabled';
  disabled_reason: 'requested' | 'failing' | null;
  signature_scheme: 'v1' | 'v1a';
  failing_since: Date | null;
  created_at: Date;
}

export const ENDPOINT_COLUMNS =
  'id, organization_id, url, description, enabled_events, status, disabled_reason, signature_scheme, failing_since, created_at';

/** The `webhook_endpoint` object of the API (the secret only where the caller adds it). */
export function endpointView(row: EndpointRow, secret?: string) {
  return {
    object: 'webhook_endpoint' as const,
    id: toPublicId('wep', row.id),
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    status: row.status,
    disabled_reason: row.disabled_reason,
    signature_scheme: row.signature_scheme,
    failing_since: row.failing_since ? row.failing_since.toISOString() : null,
    created_at: row.created_at.toISOString(),
    ...(secret ? { secret } : {}),
  };
}
