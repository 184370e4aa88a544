import { randomBytes, randomInt } from 'node:crypto';
import type { Random } from '../core/ports/Random';

/** 144 bits of randomness, URL-safe. */
export function generateToken(): string {
  return randomBytes(18).toString('base64url');
}

const idBytes = 9;
const idsPerPool = 256;
let idPool = Buffer.alloc(0);
let idOffset = 0;

/**
 * A random id (72 bits, URL-safe) for a workspace, file, link or turn: a name, not a secret.
 * Ids are cut from a pool of random bytes, one OpenSSL call per 256 ids: a single small
 * `randomBytes` call after the process sat idle took 15–200 µs (p50 ~50), and a turn id is
 * drawn on the path of every prompt, before the provider is asked.
 */
export function generateId(prefix: string): string {
  if (idOffset + idBytes > idPool.length) {
    idPool = randomBytes(idBytes * idsPerPool);
    idOffset = 0;
  }
  const id = idPool.toString('base64url', idOffset, idOffset + idBytes);
  idOffset += idBytes;
  return `${prefix}${id}`;
}

/** The operating system's randomness (OpenSSL), for ids, tokens and the agent's Yjs client ids. */
export const systemRandom: Random = {
  id: generateId,
  token: generateToken,
  int: (min, max) => randomInt(min, max),
};
