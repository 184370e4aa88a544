import type { Clock } from '../core/ports/Clock';
import type { ModelEvent, ModelProvider } from '../core/ports/ModelProvider';
import type { Recording } from './Recording';

/**
 * A ModelProvider that plays a recording's model frames: its n-th request gets the recorded
 * answer n, each event at its recorded time divided by `speed`. Whatever the thread sends is
 * ignored (the recorded answers were made for the recorded files), so the tools it calls run
 * live against the workspace and the edits land through the same engine as a live turn's.
 */
export class ReplayProvider implements ModelProvider {
  readonly kind = 'replay';
  private requests = 0;

  constructor(
    private readonly recording: Recording,
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
    private readonly speed = 1,
  ) {
    if (!(speed > 0)) throw new Error(`ReplayProvider: speed must be positive, not ${speed}`);
  }

  async close(): Promise<void> {}

  stream(_request: unknown, signal: AbortSignal): AsyncIterable<ModelEvent> {
    return this.play(this.requests++, signal);
  }

  private async *play(answer: number, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const frames = this.recording.frames.flatMap((frame) => (frame.ch === 'model' && frame.answer === answer ? [frame] : []));
    // A thread that asks once more than was recorded (it should not) is told the answer ended.
    if (frames.length === 0) {
      yield { type: 'done', finishReason: 'stop' };
      return;
    }
    const start = frames[0]!.t;
    let at = start;
    for (const frame of frames) {
      const waitMs = (frame.t - at) / this.speed;
      at = frame.t;
      if (waitMs > 0) await this.sleep(waitMs, signal);
      if (signal.aborted) return;
      yield frame.event;
    }
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(done, ms);
      function done() {
        signal.removeEventListener('abort', abort);
        resolve();
      }
      const abort = () => {
        this.clock.clearTimeout(timer);
        done();
      };
      signal.addEventListener('abort', abort, { once: true });
    });
  }
}
