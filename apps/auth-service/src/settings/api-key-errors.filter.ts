import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { ProblemException, ProblemFilter } from '@invoicing/service-kit';
import { ApiKeyLimitReached, ApiKeyNotActive, InvalidApiKeyInput } from '../keys/api-keys.service';

/**
 * The key services' domain errors as the contract's problems, in one place for every settings
 * call: 422 naming each field, 409 for a key that can no longer change or one key too many.
 */
@Catch(InvalidApiKeyInput, ApiKeyNotActive, ApiKeyLimitReached)
export class ApiKeyErrorsFilter implements ExceptionFilter {
  private readonly problems = new ProblemFilter();

  catch(error: InvalidApiKeyInput | ApiKeyNotActive | ApiKeyLimitReached, host: ArgumentsHost): void {
    this.problems.catch(toProblem(error), host);
  }
}

export function toProblem(error: InvalidApiKeyInput | ApiKeyNotActive | ApiKeyLimitReached): ProblemException {
  if (error instanceof InvalidApiKeyInput) return ProblemException.validation(error.errors);
  if (error instanceof ApiKeyNotActive) return new ProblemException(409, error.message, [{ field: 'status', code: `key_${error.status}`, message: `the key is ${error.status}` }]);
  return new ProblemException(409, error.message, [{ field: 'organization', code: 'key_limit_reached', message: `at most ${error.limit} live keys` }]);
}
