import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connectionTargetAllowed, guardedLookup, UrlPolicyOptions, UrlRefused } from './url-policy';

/** Bytes of a receiver's response kept (for the attempt's record); the rest is never read. */
export const RESPONSE_BODY_LIMIT = 1024;

export interface AttemptResult {
  ok: boolean;
  /** The receiver's status, or null when no response came. */
  status: number | null;
  latencyMs: number;
  /** Why it failed, short and safe to show the endpoint's owner (no internals of ours). */
  error: string | null;
  /** The first bytes of the response (UTF-8, replaced where invalid). */
  body: string | null;
}

export interface SendOptions extends UrlPolicyOptions {
  timeoutMs: number;
  userAgent?: string;
}

/**
 * One delivery attempt: POST the body with its headers. 2xx is success; anything else, a redirect
 * included (never followed: a redirect could point anywhere, inside the network too), a timeout or a
 * refused address is a failure. The response is read up to RESPONSE_BODY_LIMIT bytes, then the
 * connection is dropped: a receiver cannot make us read gigabytes or hold a slot forever.
 */
export function sendAttempt(url: URL, body: string, headers: Record<string, string>, options: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (!connectionTargetAllowed(url, options)) {
    return Promise.resolve({ ok: false, status: null, latencyMs: 0, error: 'address_not_allowed', body: null });
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, latencyMs: elapsed() });
    };
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        lookup: guardedLookup(options),
        agent: false, // one connection per attempt: no pooled socket outlives its check
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': options.userAgent ?? 'invoicing-webhooks/1',
          ...headers,
        },
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const status = response.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          finish({ ok, status, error: ok ? null : status >= 300 && status < 400 ? 'redirect_not_followed' : 'http_status', body: Buffer.concat(chunks).toString('utf8') });
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_BODY_LIMIT) {
            chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT - kept));
            kept += Math.min(chunk.length, RESPONSE_BODY_LIMIT - kept);
          }
          if (kept >= RESPONSE_BODY_LIMIT) done();
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const deadline = setTimeout(() => {
      finish({ ok: false, status: null, error: 'timeout', body: null });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => {
      const error =
        err.code === 'EADDRNOTPUBLIC' || err instanceof UrlRefused || /resolves to an address that is not public/.test(err.message)
          ? 'address_not_allowed'
          : err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN'
            ? 'dns_failure'
            : err.code === 'ECONNREFUSED'
              ? 'connection_refused'
              : /certificate|SSL|TLS/i.test(err.message) || err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT')
                ? 'tls_error'
                : 'connection_failed';
      finish({ ok: false, status: null, error, body: null });
    });
    request.end(body);
  });
}
