import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gateway } from '../core/Gateway';
import { parseRecording, RecordingError } from '../recording/Recording';
import { replaySpeeds, type ReplaySpeed } from '../recording/ReplayRoom';
import { ReplayLimitError, type Replays } from '../recording/Replays';
import { bearer, HttpError, json, requireJsonContentType } from './httpJson';
import type { RestRoute } from './restApi';

const maxRecordingBytes = 32 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxRecordingBytes) throw new HttpError(413, `A recording to replay may be at most ${maxRecordingBytes / 1024 / 1024} MiB.`);
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new HttpError(400, 'Request body must be a JSON object.');
}

/**
 * Replay workspaces (issue 37, decision 0035):
 * - `POST /api/replays` `{ "recording": "<the .flintrec text>" }` anyone: a new read-only workspace
 *   playing it (paused at 0): `{ workspaceId, viewerToken, controlToken, state }`
 * - `GET  /api/replays/:id` any link of that workspace: `{ state }` (playing, speed, atMs, durationMs)
 * - `POST /api/replays/:id` the control secret: `{ "action": "play" | "pause" | "seek" | "speed", "atMs"?, "speed"? }`
 */
export function createReplayApi(gateway: Gateway, replays: Replays): RestRoute {
  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    if (pathname === '/api/replays') {
      if (req.method !== 'POST') throw new HttpError(405, 'Method not allowed.');
      requireJsonContentType(req);
      const body = await readBody(req);
      if (typeof body.recording !== 'string') throw new HttpError(400, 'Send the recording\'s text as "recording".');
      let recording;
      try {
        recording = parseRecording(body.recording);
      } catch (error) {
        if (error instanceof RecordingError) throw new HttpError(400, error.message);
        throw error;
      }
      if (!recording.frames.some((f) => f.ch === 'update')) throw new HttpError(400, 'This recording holds no documents to replay (a scripted agent turn plays in the agent panel).');
      let created;
      try {
        created = replays.create(recording);
      } catch (error) {
        if (error instanceof ReplayLimitError) throw new HttpError(429, error.message);
        throw error;
      }
      json(res, 201, { workspaceId: created.workspaceId, viewerToken: created.viewerToken, controlToken: created.controlToken, state: created.replay.state });
      return true;
    }
    const match = /^\/api\/replays\/([\w-]{1,64})$/.exec(pathname);
    if (!match) return false;
    requireJsonContentType(req);
    const workspaceId = match[1]!;
    const token = bearer(req);
    if (req.method === 'GET') {
      const auth = gateway.authenticate(workspaceId, token);
      const replay = replays.get(workspaceId);
      if (!auth.ok && !replays.controlled(workspaceId, token)) throw new HttpError(403, auth.ok ? 'Forbidden.' : auth.message);
      if (!replay) throw new HttpError(404, 'This workspace is not a replay.');
      json(res, 200, { state: replay.state });
      return true;
    }
    if (req.method !== 'POST') throw new HttpError(405, 'Method not allowed.');
    const replay = replays.controlled(workspaceId, token);
    if (!replay) throw new HttpError(403, "Only the replay's presenter controls it.");
    const body = await readBody(req);
    switch (body.action) {
      case 'play':
        return json(res, 200, { state: replay.play() }), true;
      case 'pause':
        return json(res, 200, { state: replay.pause() }), true;
      case 'seek':
        if (typeof body.atMs !== 'number' || !Number.isFinite(body.atMs)) throw new HttpError(400, 'A seek needs "atMs", a time in the recording.');
        return json(res, 200, { state: replay.seek(body.atMs) }), true;
      case 'speed':
        if (!replaySpeeds.includes(body.speed as ReplaySpeed)) throw new HttpError(400, `"speed" is one of ${replaySpeeds.join(', ')}.`);
        return json(res, 200, { state: replay.setSpeed(body.speed as ReplaySpeed) }), true;
      default:
        throw new HttpError(400, '"action" is play, pause, seek or speed.');
    }
  };
}
