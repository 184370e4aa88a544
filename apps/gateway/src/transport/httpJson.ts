import type { IncomingMessage, ServerResponse } from 'node:http';

/** A REST failure with its status and a sentence for whoever called. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** The link token of `Authorization: Bearer <token>`; a 401 when there is none. */
export function bearer(req: IncomingMessage, missing = 'Send the link token as "Authorization: Bearer <token>".'): string {
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!match?.[1]) throw new HttpError(401, missing);
  return match[1];
}

const maxBodyBytes = 64 * 1024;

/**
 * Every API request with a body, and every POST, must say `Content-Type: application/json`.
 * That is what makes a browser ask first (a CORS preflight, which the gateway never grants): a
 * cross-site form or a `text/plain` fetch could otherwise create workspaces on a loopback gateway.
 */
export function requireJsonContentType(req: IncomingMessage): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (!hasBody && req.method !== 'POST') return;
  const mediaType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new HttpError(415, 'Send the request body as JSON, with "Content-Type: application/json".');
  }
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxBodyBytes) throw new HttpError(413, `Request body is larger than ${maxBodyBytes} bytes.`);
    chunks.push(chunk);
  }
  if (size === 0) return {};
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below as a 400 with a sentence, not as a stack trace.
  }
  throw new HttpError(400, 'Request body must be a JSON object.');
}
