import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 144 bits of randomness, URL-safe. */
export function generateToken(): string {
  return randomBytes(18).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares two hex digests in constant time. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
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
