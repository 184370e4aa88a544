import { describe, expect, it } from 'vitest';
import { createHostCheck } from './hostCheck';

const loopback = createHostCheck({ bindHost: '127.0.0.1', publicUrl: null, allowedOrigins: null });

describe('the Host check (DNS rebinding)', () => {
  it.each(['localhost', 'localhost:3000', 'LOCALHOST:3000', 'app.localhost:3000', '127.0.0.1:3000', '127.8.9.10', '[::1]:3000', '[::1]'])(
    '[P18] a loopback gateway answers to %s',
    (host) => expect(loopback(host)).toBe(true),
  );

  it.each(['evil.example', 'evil.example:3000', 'localhost.evil.example', '192.168.1.20:3000', '[::2]:3000', '[::1', ':3000', '', '128.0.0.1'])(
    '[P18] a loopback gateway refuses %j',
    (host) => expect(loopback(host)).toBe(false),
  );

  it('passes a request without Host: only browsers can be rebound, and they always send one', () => {
    expect(loopback(undefined)).toBe(true);
  });

  it('[P18] also answers to the hosts of FLINT_PUBLIC_URL and FLINT_ALLOWED_ORIGINS, ports aside', () => {
    const check = createHostCheck({
      bindHost: 'localhost',
      publicUrl: 'https://flint.example.com',
      allowedOrigins: ['https://ide.example.org:8443', 'not a url'],
    });
    expect(check('flint.example.com')).toBe(true);
    expect(check('Flint.Example.com:443')).toBe(true);
    expect(check('ide.example.org')).toBe(true);
    expect(check('localhost:3000')).toBe(true);
    expect(check('example.com')).toBe(false);
    expect(check('not a url')).toBe(false);
  });

  it.each(['::1', '[::1]', '127.0.0.2', 'localhost'])('treats a gateway bound to %s as loopback', (bindHost) => {
    expect(createHostCheck({ bindHost, publicUrl: null, allowedOrigins: null })('evil.example')).toBe(false);
  });

  it('leaves a gateway bound to every interface open to any host: it is reached by names it cannot know', () => {
    expect(createHostCheck({ bindHost: '0.0.0.0', publicUrl: null, allowedOrigins: null })('mybox.lan:3000')).toBe(true);
  });
});
