import { canWrite, CloseCode } from '@flint/protocol';
import type { ModelRouter } from '../agent/ModelRouter';
import type { Extension, ExtensionFactory } from '../Extension';
import { CompletionService, type CompletionConfig } from './CompletionService';

/** Autocomplete (`complete.*`) as an extension of the kernel, on the router's `complete` route. */
export function completionExtension(router: ModelRouter, config: Partial<CompletionConfig> = {}): ExtensionFactory {
  return ({ clock, metrics, log }) => {
    const completions = new CompletionService(clock, router, metrics, log, config);
    const extension: Extension<'complete'> = {
      namespace: 'complete',
      onMessage(message, session, room) {
        if (!canWrite(session.role)) return session.close(CloseCode.Forbidden, 'viewers cannot type, so they get no completions');
        completions.handle(message, session, room);
      },
      onSessionClose: (session) => completions.sessionClosed(session),
    };
    return extension;
  };
}
