/**
 * Monaco rejects superseded work with its CancellationError ("Canceled"), and some of that work
 * is awaited by no one: the inline-suggestion controller waits 50 ms under a token before it
 * announces a suggestion to screen readers, and each new ghost text, hover or suggestion list
 * cancels the last wait. Those rejections are Monaco's bookkeeping, not failures, so they are
 * dropped here instead of reaching the console as uncaught errors. Anything else still does.
 */
export function swallowMonacoCancellation(target: Pick<Window, 'addEventListener'>): void {
  target.addEventListener('unhandledrejection', (event) => {
    if (isMonacoCancellation(event.reason)) event.preventDefault();
  });
}

/** Monaco's CancellationError: an Error whose name and message are both "Canceled". */
export function isMonacoCancellation(reason: unknown): boolean {
  return reason instanceof Error && reason.name === 'Canceled' && reason.message === 'Canceled';
}
