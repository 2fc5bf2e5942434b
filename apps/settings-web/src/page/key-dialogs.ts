import { AppContext, isUnauthorized } from './app-context.js';
import { ApiError, ApiKey } from './settings-api.client.js';

/** What the key dialogs (roll secret, allowed IPs) need from the key list. */
export interface KeyListHooks {
  /** The key changed on the server: redraw its card from this view of it (never with a secret). */
  replace(key: ApiKey): void;
  /** The key is gone (404) or can no longer change (409: revoked or expired): say why, reload. */
  stale(key: ApiKey, error: ApiError): Promise<void>;
  /** After a dialog closed: focus the button that opened it, or the same one on the key's new card. */
  returnFocus(keyId: string, trigger: HTMLButtonElement): void;
}

/**
 * The failures a key dialog does not show in its own form: a lost session, and a key that no longer
 * exists or no longer takes changes (the list is out of date; reloading it tells the truth).
 */
export function handleKeyFailure(ctx: AppContext, hooks: KeyListHooks, dialog: HTMLDialogElement, key: ApiKey, error: unknown): boolean {
  if (isUnauthorized(error)) {
    dialog.close();
    ctx.sessionLost();
    return true;
  }
  if (error instanceof ApiError && (error.status === 404 || error.status === 409)) {
    dialog.close();
    void hooks.stale(key, error);
    return true;
  }
  return false;
}

/** The key as the list keeps it: the roll response minus the secret, which lives only in the dialog. */
export function withoutSecret<T extends { client_secret?: string }>(key: T): Omit<T, 'client_secret'> {
  const copy: Partial<T> = { ...key };
  delete copy.client_secret;
  return copy as Omit<T, 'client_secret'>;
}
