import { describe, expect, it } from 'vitest';
import { generateId, generateToken } from '../transport/systemRandom';
import { hashToken, sameHash } from './linkTokens';

describe('linkTokens', () => {
  it('ids are prefixed, URL-safe, 72 bits, and never repeat across pool refills', () => {
    const ids = Array.from({ length: 2_000 }, () => generateId('t'));
    for (const id of ids) expect(id).toMatch(/^t[A-Za-z0-9_-]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a token matches its own hash only', () => {
    const token = generateToken();
    expect(sameHash(hashToken(token), hashToken(token))).toBe(true);
    expect(sameHash(hashToken(token), hashToken(generateToken()))).toBe(false);
  });
});
