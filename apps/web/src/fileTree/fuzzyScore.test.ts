import { describe, expect, it } from 'vitest';
import { fuzzyScore } from './fuzzyScore';

describe('fuzzyScore', () => {
  it('matches characters in order, ignoring case, and rejects the rest', () => {
    expect(fuzzyScore('src/store/taskStore.ts', 'tss')).not.toBeNull();
    expect(fuzzyScore('src/store/taskStore.ts', 'TASK')).not.toBeNull();
    expect(fuzzyScore('src/index.ts', 'xyz')).toBeNull();
  });

  it('ranks a match in the file name above one spread over folders', () => {
    const inName = fuzzyScore('src/very/deep/folder/format.ts', 'format');
    const spread = fuzzyScore('src/for/ma/t.ts', 'format');
    expect(inName).not.toBeNull();
    expect(spread).not.toBeNull();
    expect(inName as number).toBeLessThan(spread as number);
  });
});
