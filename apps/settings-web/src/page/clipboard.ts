import { byId } from './dom.js';

/**
 * Copy buttons for credentials shown once (the created key, a rolled secret): `data-copy` names the
 * element whose text is copied, and `#<that id>-copied` (`role="status"`) says what happened.
 */
export function bindCopyButtons(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('[data-copy]')) {
    button.addEventListener('click', () => void copy(button));
  }
}

/** Empties the "Copied" messages under `root`, so that a new credential does not start out "copied". */
export function clearCopyFeedback(root: ParentNode): void {
  for (const feedback of root.querySelectorAll('.copy-feedback')) feedback.textContent = '';
}

async function copy(button: HTMLButtonElement): Promise<void> {
  const source = byId(button.dataset.copy ?? '');
  const feedback = byId(`${source.id}-copied`);
  const text = source.textContent ?? '';
  try {
    await navigator.clipboard.writeText(text);
    feedback.textContent = 'Copied';
    feedback.dataset.state = 'done';
  } catch {
    // No clipboard access (an old browser, a denied permission): select it for Ctrl+C instead.
    const selection = window.getSelection();
    selection?.selectAllChildren(source);
    feedback.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy';
    feedback.dataset.state = 'manual';
  }
  window.clearTimeout(Number(feedback.dataset.timer ?? 0));
  feedback.dataset.timer = String(window.setTimeout(() => (feedback.textContent = ''), 6000));
}
