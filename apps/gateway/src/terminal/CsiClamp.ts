/** The largest numeric parameter a control sequence keeps on its way to a screen ([P48]). */
export const csiParameterBound = 9999;

const ESC = 0x1b;
const CSI_C1 = 0x9b;

/**
 * Clamps the numeric parameters of control sequences (CSI: `ESC [` or C1 `0x9b`) in a
 * terminal's output stream to `bound`, before the bytes reach the headless screen or any browser:
 * `ESC [ 99999999 L` (insert lines) made xterm.js insert the lines one by one — the gateway's
 * screen worker at 100% and every watching page frozen. Stateful, so a sequence split between
 * reads is clamped the same as a whole one; output with no parameter over the bound passes
 * unchanged, byte for byte.
 *
 * It follows xterm's parser where it matters: `ESC [` and `0x9b` start a sequence from any state
 * (inside an OSC or DCS string too), a final byte (0x40–0x7e), CAN, SUB, ESC or a C1 control end
 * it, and other C0 controls inside it are executed without ending it (so they pass in place).
 * A parameter's digits are held back until the parameter ends, then leave as they came or, past
 * the bound, as the bound.
 */
export class CsiClamp {
  private inCsi = false;
  private afterEsc = false;
  /** Digits of the current parameter not yet passed on. */
  private held = '';
  /** The value of the current parameter's digits, passed on and held. */
  private value = 0;
  /** Some of the current parameter's digits have already left (before a C0 control inside it). */
  private emitted = false;
  private over = false;

  constructor(private readonly bound = csiParameterBound) {}

  /** The output for `chunk`; digits at its end may be held for the next one (see `flush`). */
  push(chunk: string): string {
    let out = '';
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (!this.inCsi) {
        if (c === CSI_C1 || (this.afterEsc && c === 0x5b)) {
          this.inCsi = true;
          this.afterEsc = false;
          this.resetParameter();
          // The introducer itself passes; parameters after it are copied as they end.
          out += chunk.slice(start, i + 1);
          start = i + 1;
        } else {
          this.afterEsc = c === ESC;
        }
        continue;
      }
      if (c >= 0x30 && c <= 0x39) {
        // A digit: held until its parameter ends.
        out += chunk.slice(start, i);
        start = i + 1;
        this.digit(c - 0x30);
        continue;
      }
      out += chunk.slice(start, i) + this.held;
      start = i;
      const hadDigits = this.held !== '';
      this.held = '';
      if (c === 0x3a || c === 0x3b || (c >= 0x3c && c <= 0x3f) || (c >= 0x20 && c <= 0x2f)) {
        // Separators, private markers and intermediates: still inside the sequence.
        this.resetParameter();
      } else if (c < 0x20 && c !== ESC && c !== 0x18 && c !== 0x1a) {
        // A C0 control inside the sequence is executed and the parameter goes on after it.
        if (hadDigits) this.emitted = true;
      } else {
        this.inCsi = false;
        this.afterEsc = c === ESC;
        if (c === CSI_C1) {
          this.inCsi = true;
          this.resetParameter();
        }
      }
    }
    return out + chunk.slice(start);
  }

  /** Whatever digits are held (the stream ended inside a sequence). */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  private digit(d: number): void {
    if (this.over) return;
    const next = this.value * 10 + d;
    if (next > this.bound) {
      this.over = true;
      // Digits already gone stand (they are at most the bound); otherwise the bound replaces them.
      this.held = this.emitted ? '' : String(this.bound);
      return;
    }
    this.value = next;
    // Leading zeros cannot grow the held digits without bound.
    this.held = this.held.length < 16 ? this.held + String(d) : String(next);
  }

  private resetParameter(): void {
    this.held = '';
    this.value = 0;
    this.emitted = false;
    this.over = false;
  }
}
