import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gateway } from '../core/Gateway';
import type { Playground } from '../playground/Playground';
import type { PlaygroundTemplate } from '../playground/playgroundTemplate';
import { resetToTemplate } from '../playground/resetToTemplate';
import { clientAddress } from './httpServer';
import { bearer, HttpError, json, readJson, requireJsonContentType } from './httpJson';
import { linkUrl, type RestRoute } from './restApi';

/**
 * Playground mode's REST (decision 0032):
 * - `GET  /api/playground`                   whether this gateway is a playground, and its terms
 * - `POST /api/playground/workspaces`        a fresh workspace from the template for this visitor (429 + Retry-After past a cap)
 * - `POST /api/workspaces/:id/reset`         owner: the workspace back to the template
 * Refused here: `POST /api/workspaces` (workspaces come from the template, under the caps),
 * connecting a model (the operator's model and budgets serve every workspace) and changing the
 * storage quota (each visit gets the operator's, `FLINT_PLAYGROUND_QUOTA_MB`).
 */
export interface PlaygroundApiOptions {
  playground: Playground;
  template: PlaygroundTemplate;
  publicUrl: string | null;
  trustProxy: boolean;
}

export function createPlaygroundApi(gateway: Gateway, { playground, template, publicUrl, trustProxy }: PlaygroundApiOptions): RestRoute {
  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    if (pathname === '/api/playground' && req.method === 'GET') {
      json(res, 200, { playground: true, name: template.name, idleMinutes: Math.round(playground.config.idleMs / 60_000) });
      return true;
    }
    if (pathname === '/api/playground/workspaces' && req.method === 'POST') {
      requireJsonContentType(req);
      const visit = playground.visit(clientAddress(req, trustProxy));
      if (!visit.ok) {
        res.setHeader('retry-after', String(visit.retryAfterS));
        throw new HttpError(visit.status, visit.message);
      }
      const origin = publicUrl ?? `http://${req.headers.host ?? 'localhost'}`;
      json(res, 201, { workspaceId: visit.workspaceId, url: linkUrl(origin, visit.workspaceId, visit.token) });
      return true;
    }
    if (pathname === '/api/workspaces' && req.method === 'POST') throw new HttpError(403, 'This gateway is a playground: open its front page for a workspace of your own.');
    const match = /^\/api\/workspaces\/([\w-]{1,64})\/(reset|model|quota)$/.exec(pathname);
    if (!match) return false;
    if (match[2] === 'model') {
      if (req.method === 'GET') return false;
      throw new HttpError(403, "This playground's model is set by its operator; connecting another is turned off.");
    }
    if (match[2] === 'quota') {
      if (req.method === 'GET') return false;
      throw new HttpError(403, "This playground's storage quota is set by its operator; it cannot be changed here.");
    }
    if (req.method !== 'POST') throw new HttpError(405, 'Method not allowed.');
    requireJsonContentType(req);
    const workspaceId = match[1]!;
    const auth = gateway.authenticate(workspaceId, bearer(req));
    if (!auth.ok) throw new HttpError(403, auth.message);
    if (auth.link.role !== 'owner') throw new HttpError(403, "Only the workspace's owner can reset it.");
    if (!playground.isPlayground(workspaceId)) throw new HttpError(409, 'This workspace is not a playground workspace.');
    const body = await readJson(req);
    const held = gateway.holdRoom(workspaceId);
    if (!held) throw new HttpError(404, 'No such workspace.');
    try {
      const result = resetToTemplate(held.room, template.files, typeof body.by === 'string' ? body.by.slice(0, 40) : 'the owner');
      if (!result.ok) throw new HttpError(500, result.message);
    } finally {
      held.release();
    }
    res.writeHead(204).end();
    return true;
  };
}
