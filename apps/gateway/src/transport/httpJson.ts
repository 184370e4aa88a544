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
