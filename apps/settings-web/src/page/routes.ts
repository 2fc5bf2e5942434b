/** The page's views and their paths under /settings (the server answers every one with the page). */
export type View =
  | 'login'
  | 'signup'
  | 'account'
  | 'organization'
  | 'api'
  | 'create'
  | 'created'
  | 'audit'
  | 'webhooks'
  | 'webhook-create'
  | 'webhook-created'
  | 'webhook-attempts'
  | 'not-found';

export const PATHS = {
  login: '/settings/login',
  signup: '/settings/signup',
  account: '/settings',
  organization: '/settings/organization',
  api: '/settings/api',
  create: '/settings/api/keys/new',
  created: '/settings/api/keys/created',
  /** Its filters travel in the query: `/settings/audit?type=…&api_key_id=…`. */
  audit: '/settings/audit',
  webhooks: '/settings/webhooks',
  'webhook-create': '/settings/webhooks/new',
  'webhook-created': '/settings/webhooks/created',
  /** The endpoint travels in the query: `/settings/webhooks/attempts?endpoint=wep_…`. */
  'webhook-attempts': '/settings/webhooks/attempts',
} as const satisfies Record<Exclude<View, 'not-found'>, string>;

const BY_PATH: ReadonlyMap<string, View> = new Map(Object.entries(PATHS).map(([view, path]) => [path, view as View]));

/** `/settings/api/` and `/settings/api` are the same view. */
export function viewFor(pathname: string): View {
  const normalized = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  return BY_PATH.get(normalized) ?? 'not-found';
}

/** Views that need a signed-in person. */
export function needsSession(view: View): boolean {
  return view !== 'login' && view !== 'signup' && view !== 'not-found';
}

/** Titles for `document.title`, so a screen reader announces where a navigation landed. */
export const TITLES: Record<View, string> = {
  login: 'Log in',
  signup: 'Sign up',
  account: 'Account',
  organization: 'Organization',
  api: 'API keys',
  create: 'Create key',
  created: 'Key created',
  audit: 'Audit log',
  webhooks: 'Webhooks',
  'webhook-create': 'Add webhook endpoint',
  'webhook-created': 'Webhook endpoint added',
  'webhook-attempts': 'Delivery attempts',
  'not-found': 'Page not found',
};
