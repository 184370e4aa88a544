import { describe, expect, it } from 'vitest';
import { readRoute, socketUrl } from './route';

describe('readRoute', () => {
  it('reads the workspace id from the path and the token from the fragment', () => {
    expect(readRoute({ pathname: '/w/abc-123', hash: '#token=s3cr3t' })).toEqual({
      kind: 'workspace',
      workspaceId: 'abc-123',
      token: 's3cr3t',
    });
  });

  it('tells a link without its token apart from an unknown address', () => {
    expect(readRoute({ pathname: '/w/abc', hash: '' })).toEqual({ kind: 'missing-token', workspaceId: 'abc' });
    expect(readRoute({ pathname: '/nope', hash: '#token=x' })).toEqual({ kind: 'not-found' });
    expect(readRoute({ pathname: '/', hash: '' })).toEqual({ kind: 'landing' });
  });
});

describe('socketUrl', () => {
  it('uses wss on https pages and ws on http pages, on the same host', () => {
    expect(socketUrl({ protocol: 'https:', host: 'flint.example:8443' })).toBe('wss://flint.example:8443/ws');
    expect(socketUrl({ protocol: 'http:', host: 'localhost:3000' })).toBe('ws://localhost:3000/ws');
  });
});
