/**
 * What the gateway refuses before any service sees a request, in one place: the nginx configuration
 * (nginx-config.ts), the Kubernetes Ingress (deploy/k8s/base/platform/ingress.yaml, checked by
 * deploy/tests) and docs/api.md all state these numbers.
 */
export const GATEWAY_LIMITS = {
  /**
   * Largest request body: 8 MiB. Above every service's own limit (1 MiB, docs/api.md section 13), so
   * a service still refuses its oversized bodies in its own words; this one only keeps a caller from
   * making the gateway buffer an unbounded upload.
   */
  bodyBytes: 8 * 1024 * 1024,
  /**
   * Longest request line and longest single header line: 8 KiB, the 8000 octets RFC 9112 section 3
   * asks every party to support, rounded up. A longer request line is a 414, a longer header a 431.
   */
  lineBytes: 8 * 1024,
  /** At most this many such 8 KiB buffers for the whole head (request line and headers): 32 KiB. */
  headBuffers: 4,
  /** Longest wait for an upstream's response (and between its chunks) before a 504. */
  upstreamTimeoutMs: 30_000,
  /** Longest wait to open an upstream connection before a 503 (the service is not there). */
  connectTimeoutMs: 5_000,
} as const;
