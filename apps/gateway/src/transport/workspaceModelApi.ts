import { replayThreadTurn } from '../core/agent/agentExtension';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../core/ports/Clock';
import type { Gateway } from '../core/Gateway';
import { connectionKinds, type ConnectionKind, type WorkspaceModels } from '../models/connect/WorkspaceModels';
import { ReplayProvider } from '../recording/ReplayProvider';
import { demoTurnRecording } from '../seed/demoTurn';
import { bearer, HttpError, json, readJson, requireJsonContentType } from './httpJson';

/**
 * The agent panel's first minute (issue 37): which model serves a workspace, connecting one
 * (owner only), and the demo's scripted turn played as a replay.
 *
 * - `GET    /api/workspaces/:id/model`       any link: `{ connection, gateway }`
 * - `PUT    /api/workspaces/:id/model`       owner: `{ kind, baseUrl?, apiKey?, model }`, checked first
 * - `DELETE /api/workspaces/:id/model`       owner
 * - `POST   /api/workspaces/:id/demo-replay` editor or owner: `{ by?, speed? }`
 */
export interface WorkspaceModelApiOptions {
  models: WorkspaceModels;
  clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
  /** The gateway-wide fast route's model: "flint-tiny" is the bundled demo model. */
  gatewayModel: () => string | null;
  /** False in a playground: the operator's model serves every workspace (playgroundApi refuses the PUT). */
  connectAllowed?: boolean;
}

const route = /^\/api\/workspaces\/([\w-]{1,64})\/(model|demo-replay)$/;
const speeds = [1, 2, 10];

export function createWorkspaceModelApi(gateway: Gateway, options: WorkspaceModelApiOptions) {
  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    const match = route.exec(pathname);
    if (!match) return false;
    requireJsonContentType(req);
    const workspaceId = match[1]!;
    if (!gateway.workspaceExists(workspaceId)) throw new HttpError(404, 'No such workspace.');
    const token = bearer(req);
    const auth = gateway.authenticate(workspaceId, token);
    if (!auth.ok) throw new HttpError(403, auth.message);
    const role = auth.link.role;
    if (match[2] === 'demo-replay') {
      if (req.method !== 'POST') throw new HttpError(405, 'Method not allowed.');
      const body = await readJson(req);
      const speed = body.speed === undefined ? 1 : Number(body.speed);
      if (!speeds.includes(speed)) throw new HttpError(400, `speed must be one of ${speeds.join(', ')}.`);
      const recording = demoTurnRecording;
      const routed = { provider: new ReplayProvider(recording, options.clock, speed), model: recording.label, contextTokens: 32_000, supportsPrediction: false, supportsTools: true };
      const result = await replayThreadTurn(gateway, workspaceId, token, typeof body.by === 'string' ? body.by : 'Someone', recording.prompt, routed);
      if (!result.ok) throw new HttpError(result.code === 'forbidden' ? 403 : 409, result.message);
      json(res, 202, { turnId: result.turnId });
      return true;
    }
    if (req.method === 'GET') {
      json(res, 200, { connection: options.models.view(workspaceId, role), gateway: { model: options.gatewayModel() }, canConnect: role === 'owner' && options.connectAllowed !== false });
      return true;
    }
    if (role !== 'owner') throw new HttpError(403, "Only the workspace's owner connects a model.");
    if (req.method === 'DELETE') {
      options.models.disconnect(workspaceId);
      res.writeHead(204).end();
      return true;
    }
    if (req.method !== 'PUT') throw new HttpError(405, 'Method not allowed.');
    const body = await readJson(req);
    if (!connectionKinds.includes(body.kind as ConnectionKind)) throw new HttpError(400, `kind must be one of ${connectionKinds.join(', ')}.`);
    const text = (v: unknown, name: string) => {
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string' || v.length > 2000) throw new HttpError(400, `${name} must be a string.`);
      return v;
    };
    const result = await options.models.connect(workspaceId, {
      kind: body.kind as ConnectionKind,
      baseUrl: text(body.baseUrl, 'baseUrl'),
      apiKey: text(body.apiKey, 'apiKey'),
      model: text(body.model, 'model') ?? '',
    });
    if (!result.ok) throw new HttpError(result.status, result.message);
    json(res, 200, { connection: result.view });
    return true;
  };
}
