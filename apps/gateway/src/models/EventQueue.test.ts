import { describe, expect, it } from 'vitest';
import { EventQueue, type EventQueueOptions } from './EventQueue';

async function collect<T>(queue: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of queue) seen.push(item);
  return seen;
}

function queueOf<T>(options: Omit<Partial<EventQueueOptions<T>>, 'start'> & { start?: (queue: EventQueue<T>) => void } = {}) {
  const calls = { start: 0, stop: 0 };
  const queue: EventQueue<T> = new EventQueue<T>({
    ...options,
    start: () => {
      calls.start++;
      options.start?.(queue);
    },
    stop: () => void calls.stop++,
  });
  return { queue, calls };
}

describe('EventQueue', () => {
  it('starts at the first next(), not before, like a generator', async () => {
    const { queue, calls } = queueOf<number>({ start: (q) => (q.push(1), q.end()) });
    expect(calls.start).toBe(0);
    expect(await collect(queue)).toEqual([1]);
    expect(calls.start).toBe(1);
  });

  it('delivers pushes in order, whether they came before or while the consumer waited', async () => {
    const { queue } = queueOf<number>({ start: (q) => q.push(1) });
    const seen = collect(queue);
    queue.push(2);
    await Promise.resolve();
    queue.push(3);
    setTimeout(() => {
      queue.push(4);
      queue.end();
      queue.push(5);
    }, 1);
    expect(await seen).toEqual([1, 2, 3, 4]);
  });

  it('delivers what was queued before a failure, then rejects once, then says done', async () => {
    const { queue } = queueOf<string>({ start: (q) => (q.push('a'), q.push('b'), q.fail(new Error('reset'))) });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const item of queue) seen.push(item);
      })(),
    ).rejects.toThrow('reset');
    expect(seen).toEqual(['a', 'b']);
    expect(await queue.next()).toEqual({ value: undefined, done: true });
  });

  it('rejects a waiting consumer when the stream fails later', async () => {
    const { queue } = queueOf<string>();
    const next = queue.next();
    queue.fail(new Error('idle'));
    await expect(next).rejects.toThrow('idle');
  });

  it('a start that throws fails the first next()', async () => {
    const { queue } = queueOf<string>({
      start: () => {
        throw new Error('no socket');
      },
    });
    await expect(queue.next()).rejects.toThrow('no socket');
  });

  it('tells the stream when the consumer stops early, and only then', async () => {
    const early = queueOf<number>({ start: (q) => (q.push(1), q.push(2)) });
    for await (const item of early.queue) if (item === 1) break;
    expect(early.calls.stop).toBe(1);

    const complete = queueOf<number>({ start: (q) => (q.push(1), q.end()) });
    await collect(complete.queue);
    await complete.queue.return();
    expect(complete.calls.stop).toBe(0);
  });

  it('merges what arrives while the consumer is busy, never what it already took', async () => {
    const { queue } = queueOf<string>({ merge: (a, b) => (b === '|' || a === '|' ? null : a + b) });
    const first = queue.next();
    queue.push('a'); // taken by the waiting next()
    queue.push('b');
    queue.push('c');
    queue.push('|');
    queue.push('d');
    queue.end();
    expect(await first).toEqual({ value: 'a', done: false });
    expect(await collect(queue)).toEqual(['bc', '|', 'd']);
  });

  it('ends at once when the signal aborts: nothing queued or pushed later is delivered', async () => {
    let controller = new AbortController();
    const { queue } = queueOf<number>({ signal: controller.signal, start: (q) => (q.push(1), q.push(2)) });
    expect(await queue.next()).toEqual({ value: 1, done: false });
    controller.abort();
    queue.push(3);
    expect(await queue.next()).toEqual({ value: undefined, done: true });

    const waiting = queueOf<number>({ signal: (controller = new AbortController()).signal });
    const next = waiting.queue.next();
    controller.abort();
    expect(await next).toEqual({ value: undefined, done: true });

    // Aborted before anyone read: nothing is started (no request is sent).
    controller = new AbortController();
    const unread = queueOf<number>({ signal: controller.signal, start: (q) => q.push(1) });
    controller.abort();
    expect(await unread.queue.next()).toEqual({ value: undefined, done: true });
    expect(unread.calls.start).toBe(0);
  });
});
