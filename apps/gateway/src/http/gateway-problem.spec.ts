import { problemFor } from '@invoicing/service-kit';
import { classifyUpstreamError, gatewayProblem } from './gateway-problem';

describe(gatewayProblem.name, () => {
  it('is the services problem shape with the request id', () => {
    expect(gatewayProblem(404, 'No route for /x.', 'req-1')).toEqual({ ...problemFor(404, 'No route for /x.'), request_id: 'req-1' });
    expect(Object.keys(gatewayProblem(503, 'down', 'r')).sort()).toEqual(['detail', 'request_id', 'status', 'title', 'type']);
  });

  it('names the gateway statuses instead of calling them internal errors', () => {
    expect(gatewayProblem(502, 'x', 'r')).toMatchObject({ status: 502, title: 'Bad gateway', type: expect.stringMatching(/\/bad-gateway$/) });
    expect(gatewayProblem(504, 'x', 'r')).toMatchObject({ status: 504, title: 'Gateway timeout', type: expect.stringMatching(/\/gateway-timeout$/) });
    expect(gatewayProblem(414, 'x', 'r')).toMatchObject({ status: 414, title: 'URI too long', type: expect.stringMatching(/\/uri-too-long$/) });
  });
});

describe(classifyUpstreamError.name, () => {
  const wrapped = (code: string) => Object.assign(new Error('wrapper'), { code: 'FST_REPLY_FROM_INTERNAL_SERVER_ERROR', cause: Object.assign(new Error('inner'), { code }) });

  it('treats a refused or unresolvable upstream as unavailable (503)', () => {
    expect(classifyUpstreamError(wrapped('ECONNREFUSED')).status).toBe(503);
    expect(classifyUpstreamError(wrapped('ENOTFOUND')).status).toBe(503);
  });

  it('treats a slow upstream as a timeout (504)', () => {
    expect(classifyUpstreamError(Object.assign(new Error('t'), { code: 'FST_REPLY_FROM_GATEWAY_TIMEOUT' })).status).toBe(504);
    expect(classifyUpstreamError(wrapped('UND_ERR_HEADERS_TIMEOUT')).status).toBe(504);
  });

  it('treats anything else as a bad gateway (502)', () => {
    expect(classifyUpstreamError(wrapped('ECONNRESET')).status).toBe(502);
    expect(classifyUpstreamError(new Error('odd')).status).toBe(502);
    expect(classifyUpstreamError(undefined).status).toBe(502);
  });
});
