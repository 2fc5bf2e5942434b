/**
 * DOM helpers. Every piece of text goes in through `append(string)` / `textContent`, never as HTML:
 * key names are typed by users, and the page's CSP (`require-trusted-types-for 'script'`) makes
 * `innerHTML` throw anyway.
 */

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`The page has no #${id}.`);
  return el as T;
}

type Child = Node | string | null | undefined | false;

/** `h('li', { class: 'key-card' }, h('h3', {}, name))`; `false`/`undefined` attributes are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

/** Adds or removes one id in a space-separated ARIA id list (`aria-describedby`). */
export function toggleIdRef(el: Element, attribute: string, id: string, present: boolean): void {
  const ids = new Set((el.getAttribute(attribute) ?? '').split(/\s+/).filter(Boolean));
  if (present) ids.add(id);
  else ids.delete(id);
  if (ids.size > 0) el.setAttribute(attribute, [...ids].join(' '));
  else el.removeAttribute(attribute);
}

export type Tone = 'info' | 'success' | 'error';

/**
 * The page-wide status banner (`role="status"`, polite): confirmations such as "Key revoked" that
 * must be seen and heard without stealing focus. Cleared on the next navigation.
 */
export function announce(message: string, tone: Tone = 'info'): void {
  const region = byId('status');
  region.dataset.tone = tone;
  // Emptied first so that the same sentence twice in a row is announced twice.
  region.textContent = '';
  requestAnimationFrame(() => {
    region.textContent = message;
  });
}

export function clearAnnouncement(): void {
  byId('status').textContent = '';
}

/**
 * Runs `handler` when `dialog` has closed for good. The `close` event is dispatched after the dialog
 * has closed, as a task of its own: a fast keyboard user can open it again (Escape, then Enter on the
 * same button) before it arrives. That late event belongs to the earlier opening and is ignored;
 * handled, it would undo the new opening's state (the dialog's buttons would do nothing).
 */
export function onDialogClosed(dialog: HTMLDialogElement, handler: () => void): void {
  dialog.addEventListener('close', () => {
    if (!dialog.open) handler();
  });
}
