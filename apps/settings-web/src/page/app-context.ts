import { problemMessage } from './problem-details.js';
import { ApiError, CreatedApiKey, NetworkError, Session } from './settings-api.client.js';
import type { WebhookEndpointWithSecret } from './webhooks.js';

export interface AppState {
  session: Session | null;
  /** The key just created, with its secret: held in memory only until the result view is left. */
  createdKey: CreatedApiKey | null;
  /** The webhook endpoint just added, with its signing secret: in memory only until its result view is left. */
  createdWebhook: WebhookEndpointWithSecret | null;
  /** Where to go after logging in, when a settings URL was opened without a session. */
  returnTo: string | null;
}

/** What the views need from the shell (main.ts), passed in so views never import each other. */
export interface AppContext {
  state: AppState;
  /** Shows the view of `path` (which may carry a query); focus moves to its heading unless `focus: false`. */
  navigate(path: string, options?: { replace?: boolean; focus?: boolean }): void;
  /** After login or signup: remember the person, fetch the rotated CSRF token, go on. */
  signedIn(session: Session, message: string): Promise<void>;
  /** A settings call answered 401: the session expired or was ended elsewhere. */
  sessionLost(): void;
}

/** The sentence to show for any failure of an API call. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return problemMessage(error.problem, error.retryAfterSeconds);
  if (error instanceof NetworkError) return error.message;
  return 'Something went wrong in the page. Reload it and try again.';
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}
