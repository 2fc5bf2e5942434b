import type { FastifyInstance } from 'fastify';
import { ProblemException } from '@invoicing/service-kit';
import { DEFAULT_GITHUB_REPORT_LIMITS, GITHUB_KEY_IDENTIFIER_HEADER, GITHUB_SIGNATURE_HEADER } from './github-report';
import { NOT_ACCEPTED, type ExposureService } from './exposure.service';

export const GITHUB_REPORT_PATH = '/api/v1/secret-scanning/github';

/**
 * `POST /api/v1/secret-scanning/github`, registered on Fastify itself rather than through Nest: the
 * signature covers the exact bytes GitHub sent, so this one route reads its body as a Buffer (a
 * content-type parser of its own, in an encapsulated context) instead of the parsed JSON every other
 * route gets. Errors go through the app's error handler: problem+json. Not behind a session or a
 * token: the signature is the authentication.
 */
export async function registerGithubReportRoute(fastify: FastifyInstance, exposures: () => ExposureService): Promise<void> {
  await fastify.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: DEFAULT_GITHUB_REPORT_LIMITS.maxBodyBytes }, (_request, body, done) => done(null, body));
    scope.post(
      GITHUB_REPORT_PATH,
      {
        bodyLimit: DEFAULT_GITHUB_REPORT_LIMITS.maxBodyBytes,
        // Before the body is read: a deployment that takes no reports says so (404) whatever was
        // sent, rather than judging a media type or size for an endpoint it does not serve.
        onRequest: async () => {
          if (!exposures().acceptsReports()) throw NOT_ACCEPTED();
        },
      },
      async (request, reply) => {
        // Another media type was parsed by an inherited parser: the bytes GitHub signed are gone.
        if (!Buffer.isBuffer(request.body)) throw new ProblemException(415, 'A report body must be application/json.');
        const body = request.body;
        const header = (name: string) => {
          const value = request.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        const labels = await exposures().report(body, header(GITHUB_KEY_IDENTIFIER_HEADER), header(GITHUB_SIGNATURE_HEADER));
        void reply.header('cache-control', 'no-store');
        return labels;
      },
    );
  });
}
