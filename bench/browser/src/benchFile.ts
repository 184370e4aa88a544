/**
 * The file B5 streams into, for the IDE (via the gateway) and the naive page alike: `lines`
 * lines of ordinary TypeScript. The agent writes at `benchRegionStartLine`, near the top, so
 * it writes where the user is looking; the user types on line 3.
 */
export const benchRegionStartLine = 20;
/** The region the agent rewrites: lines benchRegionStartLine … +regionLines - 1. */
export const benchRegionLines = 10;

/** Where the agent's region starts and ends in `text` (a `benchFileText`), as offsets. */
export function benchRegion(text: string): { anchor: number; head: number } {
  const lineStarts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
  return { anchor: lineStarts[benchRegionStartLine - 1]!, head: lineStarts[benchRegionStartLine - 1 + benchRegionLines]! };
}

export function benchFileText(lines: number): string {
  const out: string[] = ['// B5 benchmark file', 'import { weigh } from "./weigh";', ''];
  for (let i = out.length; i < lines; i++) {
    out.push(i % 10 === 0 ? `export function part${i}(items: number[]): number {` : i % 10 === 9 ? '}' : `  const v${i} = items.length * ${i} + weigh(${i});`);
  }
  return out.join('\n') + '\n';
}
