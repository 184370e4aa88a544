import { describe, expect, it } from 'vitest';
import { describeUpload } from './projectTransfers';

describe('the upload report', () => {
  it('counts what was created and updated', () => {
    expect(describeUpload({ created: ['a', 'b'], updated: ['c'], skipped: [] }, 'src')).toEqual({ text: 'Uploaded to src: 2 created, 1 updated.', tone: 'info' });
  });

  it('lists the first skipped files with their reasons, and what the browser left out', () => {
    const report = describeUpload(
      {
        created: ['a'],
        updated: [],
        skipped: [
          { path: 'x.bin', reason: 'larger than 10 MB' },
          { path: 'y', reason: 'a folder is there' },
          { path: 'z', reason: 'too many files' },
          { path: 'w', reason: 'too many files' },
        ],
      },
      '',
      ['site/node_modules/'],
    );
    expect(report.tone).toBe('warn');
    expect(report.text.split('\n')).toEqual([
      'Uploaded to the workspace: 1 created.',
      '4 files skipped: x.bin (larger than 10 MB); y (a folder is there); z (too many files), and 1 more.',
      'Left out: site/node_modules/.',
    ]);
  });

  it('is an error when nothing could be added', () => {
    expect(describeUpload({ created: [], updated: [], skipped: [{ path: 'a', reason: 'not allowed' }] }, 'src')).toEqual({
      text: 'Nothing was added to src.\n1 file skipped: a (not allowed).',
      tone: 'error',
    });
  });
});
