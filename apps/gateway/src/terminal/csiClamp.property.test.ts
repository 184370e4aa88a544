/**
 * [P48] The clamp on terminal output, with seeded random streams cut into random chunks: on a
 * stream with no parameter over the bound it is the identity, byte for byte; on any stream its
 * output has no parameter over the bound, and the output is the same however the stream was cut.
 * A failure prints SEED and ITERATIONS.
 */
import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { CsiClamp } from './CsiClamp';

const { seed, iterations } = propertyConfig(300);

/**
 * The largest numeric parameter in `s`, read as xterm's parser reads it: `ESC [` or 0x9b start
 * a sequence anywhere, a final byte, CAN, SUB, ESC or a C1 control end it, other C0 controls
 * inside it do not interrupt a parameter.
 */
function largestParameter(s: string): number {
  let largest = 0;
  let inCsi = false;
  let afterEsc = false;
  let value = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (!inCsi) {
      if (c === 0x9b || (afterEsc && ch === '[')) (inCsi = true), (value = 0);
      afterEsc = c === 0x1b;
      continue;
    }
    if (c >= 0x30 && c <= 0x39) {
      value = Math.min(value * 10 + (c - 0x30), Number.MAX_SAFE_INTEGER / 100);
      largest = Math.max(largest, value);
    } else if (c < 0x20 && c !== 0x1b && c !== 0x18 && c !== 0x1a) {
      // executed inside the sequence; the parameter goes on
    } else if (c <= 0x3f && c !== 0x1b && c !== 0x18 && c !== 0x1a) {
      value = 0;
    } else {
      inCsi = c === 0x9b;
      value = 0;
      afterEsc = c === 0x1b;
    }
  }
  return largest;
}

function stream(next: () => number, bound: number, huge: boolean): string {
  const pick = <T,>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!;
  const int = (n: number) => Math.floor(next() * n);
  const parameter = () => {
    const r = next();
    if (huge && r < 0.15) return String(bound + 1 + int(1e9));
    if (r < 0.2) return '0'.repeat(1 + int(3)) + String(int(10));
    if (r < 0.3) return String(bound);
    if (r < 0.4) return '';
    return String(int(bound + 1));
  };
  const pieces: string[] = [];
  for (let n = int(40); n > 0; n--) {
    const r = next();
    if (r < 0.25) pieces.push(pick(['hello ', 'ls -la\r\n', 'ä€😀', '12345678 ', '[99999999L', 'x']));
    else if (r < 0.6) {
      const params = Array.from({ length: int(4) }, parameter).join(pick([';', ':']));
      pieces.push(pick(['\x1b[', '\x9b']) + pick(['', '?', '>']) + params + pick(['', ' ', '$']) + pick(['L', 'H', 'm', '@', 'r', 'b', 'X', 'q']));
    } else if (r < 0.7) {
      // A C0 control inside a parameter, or a sequence cut short by ESC, CAN or another CSI.
      pieces.push(`\x1b[${parameter()}${pick(['\n', '\r', '\b'])}${parameter()}L`);
      pieces.push(`\x1b[${parameter()}${pick(['\x1b', '\x18', '\x1a', '\x9b'])}`);
    } else if (r < 0.8) pieces.push(`\x1b]0;title 99999999${pick(['\x07', '\x1b\\'])}`);
    else if (r < 0.9) pieces.push(pick(['\x1b', '\x1b(B', '\x1bM', '\r\n', '\x07', '\x1bP1$r99999999\x1b\\']));
    else pieces.push(String(int(1e12)));
  }
  return pieces.join('');
}

function through(clamp: CsiClamp, s: string, next: () => number): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    const size = next() < 0.3 ? 1 : 1 + Math.floor(next() * 12);
    out += clamp.push(s.slice(i, i + size));
    i += size;
  }
  return out + clamp.flush();
}

describe('the clamp on terminal output', () => {
  it.each([9999, 300, 99])('passes streams within the bound (%i) unchanged and clamps the rest, however they are cut', (bound) => {
    const seen = { identical: 0, clamped: 0 };
    for (let i = 0; i < iterations; i++) {
      const next = seededRandom(seed + i * 7919 + bound);
      const input = stream(next, bound, next() < 0.5);
      const one = new CsiClamp(bound);
      const whole = one.push(input) + one.flush();
      const cut = through(new CsiClamp(bound), input, next);
      const context = `SEED=${seed} ITERATIONS=${iterations} case ${i}: ${JSON.stringify(input)}`;
      expect(cut, context).toBe(whole);
      expect(largestParameter(cut), context).toBeLessThanOrEqual(bound);
      if (largestParameter(input) <= bound) {
        expect(cut, context).toBe(input);
        seen.identical++;
      } else {
        seen.clamped++;
      }
    }
    // The property is only as good as what it ran: both kinds of stream, many times.
    expect(seen.identical).toBeGreaterThan(iterations / 10);
    expect(seen.clamped).toBeGreaterThan(iterations / 10);
  });

  it('replaces a huge count with the bound and keeps the rest of the sequence', () => {
    const clamp = new CsiClamp(9999);
    expect(clamp.push('a\x1b[99999999Lb')).toBe('a\x1b[9999Lb');
    expect(clamp.push('\x1b[2147483647;2147483647r')).toBe('\x1b[9999;9999r');
    // Split between reads: the digits wait for the end of their parameter.
    expect(clamp.push('\x1b[999') + clamp.push('99999@ok')).toBe('\x1b[9999@ok');
    expect(clamp.push('\x1b[38;2;255;0;10m')).toBe('\x1b[38;2;255;0;10m');
  });
});
