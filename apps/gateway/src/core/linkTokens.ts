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

export function generateId(prefix: string): string {
  return `${prefix}${randomBytes(9).toString('base64url')}`;
}
