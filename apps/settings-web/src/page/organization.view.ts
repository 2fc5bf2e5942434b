import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { byId, h } from './dom.js';
import { clearFormErrors } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { formatDateTime } from './format.js';
import { formFieldErrors, formValuesOf, groupIban, OrganizationProfile, PROFILE_FORM_FIELDS, ProfileFormField, ProfileFormValues, profilePatch } from './organization-profile.js';
import { ApiError, settingsApi } from './settings-api.client.js';

/**
 * Settings → Organization: the organization's profile, printed on its invoices (ADR 0039). The form
 * is filled from the API each time the view is shown; Save sends only the fields changed since
 * (null for one emptied), so a change made meanwhile in another tab to another field survives. The
 * server's 422 names each field at fault: its message goes beside the field and what was typed
 * stays. On success the form shows what the server stored (the IBAN without spaces, upper case).
 */
export function setupOrganizationView(ctx: AppContext): { load(): Promise<void> } {
  const form = byId<HTMLFormElement>('organization-form');
  const loading = byId('organization-loading');
  const problem = byId('organization-error');
  const updated = byId('organization-updated');
  const saved = byId('organization-saved');
  const ibanSaved = byId('organization-iban-saved');
  const ibanGrouped = byId('organization-iban-grouped');

  /** The profile the form was filled from: what "changed" is measured against. */
  let profile: OrganizationProfile | null = null;
  /** Bumped by every load: an answer to an earlier one is dropped. */
  let generation = 0;

  function control(name: ProfileFormField): HTMLInputElement | HTMLTextAreaElement {
    const el = form.elements.namedItem(name);
    if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) throw new Error(`#${form.id} has no control ${name}`);
    return el;
  }

  function read(): ProfileFormValues {
    const values = {} as ProfileFormValues;
    for (const name of PROFILE_FORM_FIELDS) values[name] = control(name).value;
    return values;
  }

  function fill(next: OrganizationProfile): void {
    profile = next;
    const values = formValuesOf(next);
    for (const name of PROFILE_FORM_FIELDS) control(name).value = values[name];
    updated.textContent = next.updated_at ? `Last changed ${formatDateTime(next.updated_at)}.` : 'Not filled in yet.';
    // The stored IBAN in groups of four, beside the field: for reading it back, never sent.
    ibanSaved.hidden = next.iban === null;
    ibanGrouped.textContent = next.iban === null ? '' : groupIban(next.iban);
  }

  async function load(): Promise<void> {
    const current = (generation += 1);
    profile = null;
    form.hidden = true;
    loading.hidden = false;
    problem.replaceChildren();
    saved.textContent = '';
    updated.textContent = '';
    clearFormErrors(form);
    try {
      const answer = await settingsApi.organizationProfile();
      if (current !== generation) return;
      fill(answer);
      form.hidden = false;
    } catch (error) {
      if (current !== generation) return;
      if (isUnauthorized(error)) return ctx.sessionLost();
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void load().then(() => (form.hidden ? problem.querySelector('button') : control('legal_name'))?.focus()));
      problem.replaceChildren(h('p', {}, `The organization's details could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      if (current === generation) loading.hidden = true;
    }
  }

  // "Saved" speaks of the values saved: once one is edited again, it no longer holds.
  form.addEventListener('input', () => {
    saved.textContent = '';
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!profile) return;
    const patch = profilePatch(profile, read());
    saved.textContent = '';
    void submitForm(
      form,
      [],
      'Saving…',
      async () => {
        if (Object.keys(patch).length === 0) {
          saved.textContent = 'No changes to save';
          return;
        }
        let answer: OrganizationProfile;
        try {
          answer = await settingsApi.updateOrganizationProfile(patch);
        } catch (error) {
          // The server names address lines `address.city`; the form's controls are `address_city`.
          throw error instanceof ApiError ? new ApiError({ ...error.problem, errors: formFieldErrors(error.problem.errors) }, error.retryAfterSeconds) : error;
        }
        fill(answer);
        saved.textContent = 'Saved';
      },
      { handled: (error) => isUnauthorized(error) && (ctx.sessionLost(), true) },
    );
  });

  return { load };
}
