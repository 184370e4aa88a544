import { canWrite } from '@flint/protocol';
import type { Extension, ExtensionFactory } from '../Extension';
import { WorkspaceSearch } from './WorkspaceSearch';

/** Search and replace across files (`search.*`, [P36]–[P38]) as an extension of the kernel. */
export function searchExtension(): ExtensionFactory {
  return ({ clock }) => {
    const search = new WorkspaceSearch(clock);
    const extension: Extension<'search'> = {
      namespace: 'search',
      async onMessage(message, session, room) {
        // A viewer may search; its replace is answered `forbidden`, the socket stays open ([P38]).
        const answer = await search.handle(message, session, room, canWrite(session.role));
        if ('type' in answer) return session.sendControl(answer);
        session.sendControl({ type: 'result', requestId: answer.requestId, ok: false, code: answer.code, message: answer.message });
      },
      onSessionClose: (session) => search.sessionClosed(session),
    };
    return extension;
  };
}
