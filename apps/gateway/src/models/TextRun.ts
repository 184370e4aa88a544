import type { ModelEvent } from './ModelProvider';

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

  *flush(): Generator<ModelEvent, void, undefined> {
    if (this.tokens === 0) return;
    const event: ModelEvent = { type: 'text', text: this.text, tokens: this.tokens };
    this.text = '';
    this.tokens = 0;
    yield event;
  }
}
