import { describe, expect, it } from 'vitest';
import { decodeProjectInfo, decodeUploadResult, fileNameOf } from './projectApi';

describe('reading the gateway project answers', () => {
  it('reads a folder project in git, keeping only statuses it knows', () => {
    const info = decodeProjectInfo({
      folder: true,
      git: {
        branch: 'main',
        files: [
          { path: 'src/a.ts', status: 'modified' },
          { path: 'b.ts', status: 'copied' },
          { path: 42, status: 'added' },
          null,
          { path: 'c.ts', status: 'untracked' },
        ],
      },
    });
    expect(info).toEqual({
      folder: true,
      git: {
        branch: 'main',
        files: [
          { path: 'src/a.ts', status: 'modified' },
          { path: 'c.ts', status: 'untracked' },
        ],
      },
    });
  });

  it('reads a detached HEAD as no branch, and no git as null', () => {
    expect(decodeProjectInfo({ folder: true, git: { branch: null, files: [] } })).toEqual({ folder: true, git: { branch: null, files: [] } });
    expect(decodeProjectInfo({ folder: true, git: null })).toEqual({ folder: true, git: null });
    expect(decodeProjectInfo({ folder: false })).toEqual({ folder: false, git: null });
  });

  it('refuses what is not a project answer', () => {
    expect(decodeProjectInfo(null)).toBeNull();
    expect(decodeProjectInfo('<html>')).toBeNull();
    expect(decodeProjectInfo({ folder: true, git: 'main' })).toBeNull();
  });

  it('reads an upload result, with a reason for every skipped file', () => {
    expect(decodeUploadResult({ created: ['a', 1], updated: ['b'], skipped: [{ path: 'c', reason: 'too large' }, { path: 'd' }, { reason: 'x' }] })).toEqual({
      created: ['a'],
      updated: ['b'],
      skipped: [
        { path: 'c', reason: 'too large' },
        { path: 'd', reason: 'no reason given' },
      ],
    });
    expect(decodeUploadResult(null)).toEqual({ created: [], updated: [], skipped: [] });
  });

  it('takes a download name from Content-Disposition, the UTF-8 one first', () => {
    expect(fileNameOf('attachment; filename="site.zip"')).toBe('site.zip');
    expect(fileNameOf(`attachment; filename="r_sum.zip"; filename*=UTF-8''r%C3%A9sum%C3%A9.zip`)).toBe('résumé.zip');
    expect(fileNameOf('attachment; filename=plain.zip')).toBe('plain.zip');
    expect(fileNameOf(`attachment; filename="ok.zip"; filename*=UTF-8''%E0%A4`)).toBe('ok.zip');
    expect(fileNameOf('attachment')).toBeNull();
    expect(fileNameOf(null)).toBeNull();
  });
});
