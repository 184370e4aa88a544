import { WebSocket } from 'ws';

/** The browser end of the raw relay (bench/servers/relayServer.ts): asks for a stream, timestamps messages. */
export class RelayClient {
  /** Arrival times (performance.now) of text messages while `recording`. */
  readonly messageTimes: number[] = [];
  recording = false;
  private onDone: (() => void) | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const now = performance.now();
      if (!isBinary && data.length === 13 && data.toString() === '{"done":true}') {
        this.onDone?.();
        return;
      }
      if (this.recording) this.messageTimes.push(now);
    });
  }

  static async connect(url: string): Promise<RelayClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new RelayClient(ws);
  }

  /** Asks the relay for one stream; resolves when it is done. */
  stream(timeoutMs = 120_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('relay stream timed out')), timeoutMs);
      this.onDone = () => {
        clearTimeout(timer);
        this.onDone = null;
        resolve();
      };
      this.ws.send('{"stream":true}');
    });
  }

  close(): void {
    this.ws.terminate();
  }
}
