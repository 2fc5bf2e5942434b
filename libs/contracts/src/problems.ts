/**
 * Base of problem `type` URIs (RFC 9457); each names a documented error class (docs/api.md section 8).
 * Here, not in service-kit, because the gateway's nginx configuration states it too.
 */
export const PROBLEM_TYPE_BASE = 'https://docs.invoicing.example/problems/';
