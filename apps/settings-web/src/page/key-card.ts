import { h } from './dom.js';
import { displayStatus, expiresSoonLabel, formatDateTime, previousSecretAccepted, safeHttpUrl, statusLabel } from './format.js';
import { PATHS } from './routes.js';
import { ApiKey } from './settings-api.client.js';

/** One key of the list as a card, and the pieces of it that the created-key view shows too. */

export type KeyAction = 'roll' | 'edit-ips' | 'revoke';

export function timeElement(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso }, formatDateTime(iso));
}

/**
 * A URL someone else reported (untrusted text): a link that opens in a new tab, without the page's
 * address or a handle on it, when it is a plain http(s) address; otherwise just the text.
 */
export function externalUrl(value: string): Node {
  const href = safeHttpUrl(value);
  if (href === null) return h('span', { class: 'wrap-anywhere' }, value);
  return h(
    'a',
    { href, rel: 'noopener noreferrer', target: '_blank', class: 'wrap-anywhere' },
    href,
    h('span', { class: 'visually-hidden' }, ' (opens in a new tab)'),
  );
}

/**
 * The banner of a key whose secret a secret-scanning report found in public (the platform revoked
 * it then): where, when, and what to do. First thing in the card, so it is read before the details.
 */
function exposedBanner(exposedAt: string, url: string | null): HTMLDivElement {
  return h(
    'div',
    { class: 'callout callout--danger key-card__exposed' },
    h(
      'p',
      {},
      h('strong', {}, "This key's secret was found in public"),
      ...(url ? [' at ', externalUrl(url)] : []),
      ' on ',
      timeElement(exposedAt),
      ' and the key was revoked. ',
      h('a', { href: PATHS.create, 'data-link': true }, 'Create a new key'),
      '.',
    ),
  );
}

/** "Never" or the expiry time. */
export function expiryValue(expiresAt: string | null): Node | string {
  return expiresAt === null ? 'Never' : timeElement(expiresAt);
}

/** The allowed addresses as tags, or "Any address" for an empty list. */
export function addressListValue(list: readonly string[]): Node | string {
  return list.length === 0 ? 'Any address' : h('ul', { class: 'scope-tags' }, ...list.map((ip) => h('li', {}, h('code', { class: 'wrap-anywhere' }, ip))));
}

function row(label: string, ...value: (Node | string | null)[]): HTMLDivElement {
  return h('div', { class: 'key-card__row' }, h('dt', {}, label), h('dd', {}, ...value));
}

const ACTION_TEXT: Record<KeyAction, string> = { roll: 'Roll secret', 'edit-ips': 'Edit allowed IPs', revoke: 'Revoke' };

/**
 * The card. Actions are offered on active keys only (the server answers 409 for the others). Each
 * button's name ends with the key's name ("Roll secret of key “ERP”"), so a screen reader's list of
 * buttons tells them apart; `data-action` lets focus come back to the same button on a new card.
 */
export function keyCard(key: ApiKey, onAction: (action: KeyAction, key: ApiKey, trigger: HTMLButtonElement) => void, now: number = Date.now()): HTMLLIElement {
  const headingId = `key-${key.id}-name`;
  const status = displayStatus(key, now);
  const active = status === 'active';
  const soon = active ? expiresSoonLabel(key.expires_at, now) : null;
  const previous = active && previousSecretAccepted(key.previous_secret_expires_at, now) ? key.previous_secret_expires_at : null;

  const button = (action: KeyAction): HTMLButtonElement => {
    const b = h(
      'button',
      { type: 'button', class: `button ${action === 'revoke' ? 'button--danger-quiet' : ''}`.trim(), 'data-action': action },
      ACTION_TEXT[action],
      h('span', { class: 'visually-hidden' }, action === 'revoke' ? ` key “${key.name}”` : ` of key “${key.name}”`),
    );
    b.addEventListener('click', () => onAction(action, key, b));
    return b;
  };

  return h(
    'li',
    {
      class: `key-card${active ? '' : ' key-card--inactive'}${key.exposed_at ? ' key-card--exposed' : ''}`,
      'data-key-id': key.id,
      'aria-labelledby': headingId,
    },
    h('h3', { class: 'key-card__name', id: headingId, tabindex: '-1' }, key.name),
    key.exposed_at ? exposedBanner(key.exposed_at, key.exposed_url?.trim() ? key.exposed_url : null) : null,
    h(
      'dl',
      { class: 'key-card__details' },
      row('Client ID', h('code', { class: 'wrap-anywhere' }, key.client_id)),
      row('Scopes', h('ul', { class: 'scope-tags' }, ...key.scopes.map((s) => h('li', {}, h('code', {}, s))))),
      row('Created', timeElement(key.created_at)),
      row('Expires', expiryValue(key.expires_at), soon ? ' ' : null, soon ? h('span', { class: 'badge badge--warning' }, soon) : null),
      row('Allowed IPs', addressListValue(key.allowed_ips)),
      // The current secret's last use: after a roll, what tells whether integrations switched.
      row('Last used', key.secret_last_used_at ? timeElement(key.secret_last_used_at) : 'Never'),
      previous
        ? row(
            'Previous secret',
            h('span', { class: 'key-card__line' }, 'Accepted until ', timeElement(previous)),
            h(
              'span',
              { class: 'key-card__line muted' },
              ...(key.previous_secret_last_used_at ? ['Used ', timeElement(key.previous_secret_last_used_at)] : ['Never used']),
            ),
          )
        : null,
      row(
        'Status',
        h('span', { class: `badge badge--${active ? 'active' : 'inactive'}` }, statusLabel(status)),
        ...(key.revoked_at
          ? [' ', h('span', { class: 'muted' }, 'on ', timeElement(key.revoked_at))]
          : status === 'expired' && key.expires_at
            ? [' ', h('span', { class: 'muted' }, 'on ', timeElement(key.expires_at))]
            : []),
      ),
    ),
    active ? h('div', { class: 'key-card__actions' }, button('roll'), button('edit-ips'), button('revoke')) : null,
  );
}
