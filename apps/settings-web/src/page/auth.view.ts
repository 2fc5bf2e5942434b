import { AppContext } from './app-context.js';
import { byId, h } from './dom.js';
import { clearFormErrors, FieldProblem } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { PATHS } from './routes.js';
import { ApiError, settingsApi } from './settings-api.client.js';

/** Mirrors the server's rule so the common mistake is caught before a round trip; the server decides. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

function value(form: HTMLFormElement, name: string): string {
  const input = form.elements.namedItem(name);
  return input instanceof HTMLInputElement ? input.value : '';
}

function checkEmail(email: string, problems: FieldProblem[]): void {
  if (!email.trim()) problems.push({ field: 'email', message: 'Enter your email address.' });
  else if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) problems.push({ field: 'email', message: 'Enter an email address like name@example.com.' });
}

/** Sign-up and log-in forms, and the show/hide toggles of their password fields. */
export function setupAuthForms(ctx: AppContext): { reset(form: 'login' | 'signup'): void } {
  const loginForm = byId<HTMLFormElement>('login-form');
  const signupForm = byId<HTMLFormElement>('signup-form');

  for (const toggle of document.querySelectorAll<HTMLButtonElement>('[data-toggles-password]')) {
    toggle.addEventListener('click', () => {
      const input = byId<HTMLInputElement>(toggle.dataset.togglesPassword ?? '');
      const show = input.type === 'password';
      input.type = show ? 'text' : 'password';
      toggle.setAttribute('aria-pressed', String(show));
    });
  }

  const submit = (form: HTMLFormElement, problems: FieldProblem[], busyLabel: string, call: () => Promise<void>) =>
    submitForm(form, problems, busyLabel, call, {
      after: (error) => (error instanceof ApiError && error.status === 409 && form === signupForm ? loginInstead() : null),
    });

  loginForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const email = value(loginForm, 'email');
    const password = value(loginForm, 'password');
    const problems: FieldProblem[] = [];
    checkEmail(email, problems);
    if (!password) problems.push({ field: 'password', message: 'Enter your password.' });
    void submit(loginForm, problems, 'Logging in…', async () => {
      const session = await settingsApi.login({ email: email.trim(), password });
      loginForm.reset();
      await ctx.signedIn(session, `Logged in as ${session.user.email}.`);
    });
  });

  signupForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const organizationName = value(signupForm, 'organization_name').trim();
    const email = value(signupForm, 'email');
    const password = value(signupForm, 'password');
    const problems: FieldProblem[] = [];
    if (!organizationName) problems.push({ field: 'organization_name', message: 'Enter the name of your organization.' });
    checkEmail(email, problems);
    if (!password) problems.push({ field: 'password', message: `Choose a password of ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.` });
    else if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
      problems.push({ field: 'password', message: `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.` });
    }
    void submit(signupForm, problems, 'Creating account…', async () => {
      const session = await settingsApi.signup({ organization_name: organizationName, email: email.trim(), password });
      signupForm.reset();
      await ctx.signedIn(session, `Welcome! Your organization ${session.organization.name} is ready.`);
    });
  });

  function loginInstead(): HTMLElement {
    return h('a', { href: PATHS.login, 'data-link': true }, 'Log in instead.');
  }

  return {
    reset(which) {
      const form = which === 'login' ? loginForm : signupForm;
      clearFormErrors(form);
      for (const input of form.querySelectorAll<HTMLInputElement>('input[type="text"][data-password]')) input.type = 'password';
      for (const toggle of form.querySelectorAll('[data-toggles-password]')) toggle.setAttribute('aria-pressed', 'false');
    },
  };
}
