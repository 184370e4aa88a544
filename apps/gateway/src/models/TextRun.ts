import type { ModelEvent } from '../core/ports/ModelProvider';

/**
 * Text deltas that arrived together (one network read), delivered as one text event that counts
 * them: a fast model's read holds hundreds, and every event is an async step in each consumer.
 * The streaming adapters add deltas as they decode a read and flush at its end, or before any
 * other event so the order on the wire is kept.
 */
export class TextRun {
  private text = '';
  private tokens = 0;

  add(delta: string): void {
    this.text += delta;
    this.tokens++;
  }

  /** The text gathered since the last take, as one event; null when there is none. */
  take(): ModelEvent | null {
    if (this.tokens === 0) return null;
    const event: ModelEvent = { type: 'text', text: this.text, tokens: this.tokens };
    this.text = '';
    this.tokens = 0;
    return event;
  }

  *flush(): Generator<ModelEvent, void, undefined> {
    const event = this.take();
    if (event) yield event;
  }
}

/**
 * Two deltas as one (`EventQueue`'s merge): text after text, or arguments after arguments of the
 * same call, that waited together are taken together — what the consumer had not taken yet, so
 * nothing is held back from it.
 */
export function mergeDeltas(queued: ModelEvent, next: ModelEvent): ModelEvent | null {
  if (queued.type === 'text' && next.type === 'text') {
    return { type: 'text', text: queued.text + next.text, tokens: (queued.tokens ?? 1) + (next.tokens ?? 1) };
  }
  if (queued.type === 'tool-call-delta' && next.type === 'tool-call-delta' && queued.index === next.index) {
    return { type: 'tool-call-delta', index: queued.index, arguments: queued.arguments + next.arguments, tokens: (queued.tokens ?? 1) + (next.tokens ?? 1) };
  }
  return null;
}
