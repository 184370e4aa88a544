import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gateway } from '../core/Gateway';
import { writeRecording } from '../recording/Recording';
import type { Recordings } from '../recording/Recordings';
import { bearer, HttpError, json, requireJsonContentType } from './httpJson';
import type { RestRoute } from './restApi';

/**
 * Recording a workspace (issue 37), the owner's:
 * - `POST   /api/workspaces/:id/recording`  start
 * - `GET    /api/workspaces/:id/recording`  any link: whether it records, how many frames, and
 *   `stoppedBecause` when it stopped itself at a cap
 * - `DELETE /api/workspaces/:id/recording`  stop, and download it (`.flintrec`, JSON Lines); the
 *   gateway keeps no copy after (a stopped recording not downloaded is dropped after 15 min)
 */
export function createRecordingApi(gateway: Gateway, recordings: Recordings): RestRoute {
  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    const match = /^\/api\/workspaces\/([\w-]{1,64})\/recording$/.exec(pathname);
    if (!match) return false;
    requireJsonContentType(req);
    const workspaceId = match[1]!;
    const auth = gateway.authenticate(workspaceId, bearer(req));
    if (!auth.ok) throw new HttpError(403, auth.message);
    if (req.method === 'GET') {
      json(res, 200, recordings.status(workspaceId));
      return true;
    }
    if (auth.link.role !== 'owner') throw new HttpError(403, "Only the workspace's owner records it.");
    if (req.method === 'POST') {
      const started = recordings.start(workspaceId, `Recording of ${workspaceId}`);
      if (started === 'no-workspace') throw new HttpError(404, 'No such workspace.');
      if (started === 'already') throw new HttpError(409, 'This workspace is being recorded already.');
      json(res, 201, recordings.status(workspaceId));
      return true;
    }
    if (req.method === 'DELETE') {
      // Handed over: the gateway keeps no copy once it is downloaded.
      const recording = recordings.take(workspaceId);
      if (!recording) throw new HttpError(404, 'Nothing was recorded in this workspace.');
      res.writeHead(200, {
        'content-type': 'application/x-ndjson; charset=utf-8',
        'content-disposition': `attachment; filename="flint-${workspaceId}.flintrec"`,
        'cache-control': 'no-store',
      });
      res.end(writeRecording(recording));
      return true;
    }
    throw new HttpError(405, 'Method not allowed.');
  };
}
