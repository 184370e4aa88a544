import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from './securityHeaders';

describe('the IDE page Content-Security-Policy', () => {
  it("lets the page's WebSocket reach its own host", () => {
    expect(contentSecurityPolicy('127.0.0.1:4173')).toContain("connect-src 'self' ws://127.0.0.1:4173 wss://127.0.0.1:4173;");
    expect(contentSecurityPolicy('[::1]:3000')).toContain('ws://[::1]:3000');
  });

  it('writes no host that does not read as one, so a forged Host adds no directive', () => {
    const policy = contentSecurityPolicy("evil.example; script-src 'unsafe-eval'");
    expect(policy).toContain("connect-src 'self';");
    expect(policy).not.toContain('evil.example');
    expect(policy).not.toContain('unsafe-eval');
  });
});
