import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Role } from '@flint/protocol';
import type { Gateway } from '../core/Gateway';
import type { Log } from '../core/ports/Log';
import { noProjects, type ProjectRegistry } from '../project/FolderProject';
import { createProjectApi } from './projectApi';
import type { LinkRecord } from '../core/ports/Store';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { bearer, HttpError, json, readJson, requireJsonContentType } from './httpJson';

const maxExpiresInMs = 365 * 24 * 3600 * 1000;


const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Digests first: equal lengths for timingSafeEqual, and the time says nothing of the token's length. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

const createTokenMessage = 'Creating a workspace on this gateway needs its create token: send "Authorization: Bearer <FLINT_CREATE_TOKEN>".';

const publicLink = (link: LinkRecord) => ({
  id: link.id,
  role: link.role,
  label: link.label,
  createdAt: link.createdAt,
  expiresAt: link.expiresAt,
});

/** A REST route: true when it answered the request. */
export type RestRoute = (req: IncomingMessage, res: ServerResponse, pathname: string) => Promise<boolean>;

export function linkUrl(origin: string, workspaceId: string, token: string): string {
  return `${origin}/w/${workspaceId}#token=${token}`;
}

function originOf(req: IncomingMessage, publicUrl: string | null): string {
  return publicUrl ?? `http://${req.headers.host ?? 'localhost'}`;
}

export interface RestApiOptions {
  publicUrl: string | null;
  /** When set, only a request bearing it may create a workspace; link routes need a link token. */
  createToken: string | null;
  /** Folder projects (issue 24): what git sees, zip download and upload. Unset: none. */
  projects?: ProjectRegistry;
  log?: Log;
  /** More routes, tried in order before the project routes (workspaceModelApi.ts, playgroundApi.ts). */
  routes?: ReadonlyArray<RestRoute>;
}

/**
 * The REST API: create a workspace; create, list and revoke links; the project routes
 * (projectApi.ts). Returns false when the path is not an API route.
 */
export function createRestApi(gateway: Gateway, { publicUrl, createToken, projects = noProjects, log = () => {}, routes = [] }: RestApiOptions) {
  const projectApi = createProjectApi(gateway, { projects, log });
  async function route(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    // The extra routes first: a mode may refuse one of the project routes (a playground's quota is the operator's).
    for (const extra of routes) if (await extra(req, res, pathname)) return true;
    // Before the JSON-only rule below: an upload's body is a zip (its own type, which browsers preflight too).
    if (await projectApi(req, res, pathname)) return true;
    if (pathname === '/api/workspaces' && req.method === 'POST') {
      if (createToken !== null && !sameSecret(bearer(req, createTokenMessage), createToken)) {
        throw new HttpError(401, createTokenMessage);
      }
      requireJsonContentType(req);
      const body = await readJson(req);
      const name = typeof body.name === 'string' && body.name.trim() ? body.name.trim().slice(0, 100) : 'Untitled workspace';
      const created = gateway.createWorkspace(name, body.seed === 'demo' ? demoWorkspaceFiles : { 'README.md': `# ${name}\n` });
      json(res, 201, {
        workspaceId: created.workspaceId,
        url: linkUrl(originOf(req, publicUrl), created.workspaceId, created.owner.token),
      });
      return true;
    }
    const match = /^\/api\/workspaces\/([\w-]{1,64})\/links(?:\/([\w-]{1,64}))?$/.exec(pathname);
    if (!match) return false;
    requireJsonContentType(req);
    const workspaceId = match[1] ?? '';
    const linkId = match[2];
    if (!gateway.workspaceExists(workspaceId)) throw new HttpError(404, 'No such workspace.');
    const token = bearer(req);
    if (linkId === undefined && req.method === 'GET') {
      const result = gateway.listLinks(workspaceId, token);
      if (!result.ok) throw new HttpError(result.status, result.message);
      json(res, 200, { links: result.value.map(publicLink) });
      return true;
    }
    if (linkId === undefined && req.method === 'POST') {
      const body = await readJson(req);
      const role = body.role;
      if (role !== 'editor' && role !== 'viewer' && role !== 'owner') {
        throw new HttpError(400, 'role must be "owner", "editor" or "viewer".');
      }
      const expiresInMs = body.expiresInMs ?? null;
      if (expiresInMs !== null && (typeof expiresInMs !== 'number' || !(expiresInMs > 0) || expiresInMs > maxExpiresInMs)) {
        throw new HttpError(400, 'expiresInMs must be null or a positive number of milliseconds up to a year.');
      }
      const label = typeof body.label === 'string' && body.label.trim() ? body.label.trim().slice(0, 100) : defaultLabel(role);
      const result = gateway.share(workspaceId, token, { role, label, expiresInMs });
      if (!result.ok) throw new HttpError(result.status, result.message);
      json(res, 201, {
        link: publicLink(result.value.link),
        url: linkUrl(originOf(req, publicUrl), workspaceId, result.value.token),
      });
      return true;
    }
    if (linkId !== undefined && req.method === 'DELETE') {
      // Optional `{ by }`: the revoker's display name, for the revoked tabs' banner.
      const body = await readJson(req);
      const result = gateway.revokeLink(workspaceId, token, linkId, typeof body.by === 'string' ? body.by : null);
      if (!result.ok) throw new HttpError(result.status, result.message);
      res.writeHead(204).end();
      return true;
    }
    throw new HttpError(405, 'Method not allowed.');
  }

  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    try {
      return await route(req, res, pathname);
    } catch (error) {
      if (error instanceof HttpError) {
        json(res, error.status, { error: error.message });
        return true;
      }
      throw error;
    }
  };
}

function defaultLabel(role: Role): string {
  return role === 'viewer' ? 'Viewer link' : role === 'editor' ? 'Editor link' : 'Owner link';
}
