import { describe, expect, it } from 'vitest';
import { completeMention, mentionQueryAt, mentionsIn, suggestMentions } from './mentions';

const files = new Set(['src/app.ts', 'src/store/taskStore.ts', 'README.md', 'docs/a.b.md']);

describe('@-mentions', () => {
  it('finds the mention the caret is in, only after a space or at the start', () => {
    expect(mentionQueryAt('look at @src/ap', 15)).toEqual({ start: 8, query: 'src/ap' });
    expect(mentionQueryAt('@', 1)).toEqual({ start: 0, query: '' });
    expect(mentionQueryAt('mail me@host', 12)).toBeNull();
    expect(mentionQueryAt('@src/app.ts done', 16)).toBeNull();
  });

  it('suggests files by fuzzy match, the file name first', () => {
    expect(suggestMentions(files, 'task')).toEqual(['src/store/taskStore.ts']);
    expect(suggestMentions(files, '', 2)).toHaveLength(2);
  });

  it('completes the mention with the path and a space, replacing the rest of the word', () => {
    const text = 'fix @sr now';
    const mention = mentionQueryAt(text, 7)!;
    expect(completeMention(text, mention, 7, 'src/app.ts')).toEqual({ text: 'fix @src/app.ts now', caret: 16 });
  });

  it('sends only mentions that name files, once each, without trailing punctuation', () => {
    const text = 'Compare @src/app.ts, @README.md and @nope.ts. Again @src/app.ts; also @docs/a.b.md.';
    expect(mentionsIn(text, (p) => files.has(p))).toEqual(['src/app.ts', 'README.md', 'docs/a.b.md']);
  });
});
