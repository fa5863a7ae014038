/**
 * Keyboard shortcuts' shared rule: a key typed into a field, or pressed with a modifier, is the
 * person writing, never a shortcut.
 */
export function isShortcut(event: KeyboardEvent): boolean {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return false;
  const target = event.target;
  if (!(target instanceof HTMLElement)) return true;
  if (target.isContentEditable) return false;
  return !target.closest("input, textarea, select, [contenteditable='true']");
}
