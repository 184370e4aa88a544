import type { EventEmitter } from 'node:events';

/**
 * Resolves once `predicate` holds, re-checking on each 'change' the fake emits; rejects after
 * `timeoutMs` (a guard against a hung test, not a wait).
 */
export function waitForChange(changes: EventEmitter, predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  if (predicate()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!predicate()) return;
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what}.waitFor: condition not met within ${timeoutMs} ms`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      changes.off('change', check);
    };
    changes.on('change', check);
  });
}
