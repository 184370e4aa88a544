import type { FinishReason, ModelEvent } from '../core/ports/ModelProvider';

/**
 * Flint's recording format (issue 37): a title, what was asked, and timed frames, one JSON
 * object per line on disk (`.flintrec`, JSON Lines: the header first, then the frames), so a
 * long recording is appended and streamed without holding it whole.
 *
 * A frame names its channel. `model` frames are a provider's stream, answer by answer (a turn
 * that calls tools asks the model several times): played through the thread engine by
 * ReplayProvider, they rebuild the turn's edits, cursor and review exactly as live. A session
 * recording adds `update` (a document's Yjs update) and `awareness` (a cursor, selection and
 * name as a tab or the agent announced it in a document: the document it is in is the file it has
 * open); readers skip channels they do not know.
 */
export const RECORDING_FORMAT = 'flint-recording';
export const RECORDING_VERSION = 1;

export interface RecordingHeader {
  format: typeof RECORDING_FORMAT;
  version: typeof RECORDING_VERSION;
  title: string;
  /** The message that started the recorded turn, shown as the replay's first line. */
  prompt: string;
  /** Shown as the turn's model: it says plainly that this is a replay. */
  label: string;
}

/**
 * `t`: milliseconds since the recording began. `model`: a provider event of answer `answer` (which
 * model request of the turn, 0-based). `update`: a Yjs update of document `doc` as the gateway
 * applied it, base64 — a document's first frame is its whole state when the recording began or
 * when it was first loaded after; the thread's messages and the agent's tokens are updates of
 * the thread doc (`~thread`) and of the files.
 */
export type RecordedFrame =
  | { t: number; ch: 'model'; answer: number; event: ModelEvent }
  | { t: number; ch: 'update'; doc: string; data: string }
  /**
   * `awareness`: the state awareness client `client` showed in document `doc` from `t` on, as the
   * gateway relayed it (y-protocols' JSON: `user`, `cursor` as Yjs relative positions...), or
   * `null` when it left. A peer's frames are coalesced to at most one per 50 ms (SessionRecorder).
   */
  | { t: number; ch: 'awareness'; doc: string; client: number; state: string | null };

export interface Recording extends RecordingHeader {
  frames: RecordedFrame[];
}

export class RecordingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordingError';
  }
}

/** The JSON Lines text of a recording: its header, then one frame per line. */
export function writeRecording(recording: Recording): string {
  const { frames, ...header } = recording;
  return [header, ...frames].map((line) => JSON.stringify(line)).join('\n') + '\n';
}

const finishReasons: FinishReason[] = ['stop', 'length', 'tool_calls'];

function modelEvent(value: unknown): ModelEvent | null {
  if (typeof value !== 'object' || value === null) return null;
  const e = value as Record<string, unknown>;
  const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  switch (e.type) {
    case 'text':
      return typeof e.text === 'string' ? { type: 'text', text: e.text } : null;
    case 'tool-call':
      return int(e.index) && typeof e.id === 'string' && typeof e.name === 'string' ? { type: 'tool-call', index: e.index as number, id: e.id, name: e.name } : null;
    case 'tool-call-delta':
      return int(e.index) && typeof e.arguments === 'string' ? { type: 'tool-call-delta', index: e.index as number, arguments: e.arguments } : null;
    case 'done':
      return finishReasons.includes(e.finishReason as FinishReason) ? { type: 'done', finishReason: e.finishReason as FinishReason } : null;
    default:
      return null;
  }
}

/** Reads a recording's text; a malformed line is an error naming the line, never a partial recording. */
export function parseRecording(text: string): Recording {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const parse = (line: string, n: number): Record<string, unknown> => {
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Reported below with its line number.
    }
    throw new RecordingError(`Line ${n} of the recording is not a JSON object.`);
  };
  if (lines.length === 0) throw new RecordingError('The recording is empty.');
  const header = parse(lines[0]!, 1);
  if (header.format !== RECORDING_FORMAT) throw new RecordingError(`This is not a Flint recording (its first line has no "format": "${RECORDING_FORMAT}").`);
  if (header.version !== RECORDING_VERSION) throw new RecordingError(`The recording is version ${String(header.version)}; this gateway reads version ${RECORDING_VERSION}.`);
  const str = (v: unknown, name: string) => {
    if (typeof v !== 'string') throw new RecordingError(`The recording's header has no "${name}".`);
    return v;
  };
  const frames: RecordedFrame[] = [];
  let last = 0;
  for (let i = 1; i < lines.length; i++) {
    const frame = parse(lines[i]!, i + 1);
    if (typeof frame.t !== 'number' || !(frame.t >= last)) throw new RecordingError(`Line ${i + 1}: "t" must be a time in ms, not earlier than the line before.`);
    last = frame.t;
    if (frame.ch === 'update') {
      if (typeof frame.doc !== 'string' || typeof frame.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(frame.data)) throw new RecordingError(`Line ${i + 1}: an update frame needs "doc" and base64 "data".`);
      frames.push({ t: frame.t, ch: 'update', doc: frame.doc, data: frame.data });
      continue;
    }
    if (frame.ch === 'awareness') {
      const okState = frame.state === null || (typeof frame.state === 'string' && frame.state.length <= 64 * 1024);
      if (typeof frame.doc !== 'string' || typeof frame.client !== 'number' || !Number.isInteger(frame.client) || frame.client < 0 || !okState) {
        throw new RecordingError(`Line ${i + 1}: an awareness frame needs "doc", a "client" id and a "state" (a JSON text, or null).`);
      }
      frames.push({ t: frame.t, ch: 'awareness', doc: frame.doc, client: frame.client, state: frame.state as string | null });
      continue;
    }
    if (frame.ch !== 'model') continue;
    const event = modelEvent(frame.event);
    if (!event || typeof frame.answer !== 'number' || !Number.isInteger(frame.answer) || frame.answer < 0) throw new RecordingError(`Line ${i + 1}: a model frame needs "answer" and a model event.`);
    frames.push({ t: frame.t, ch: 'model', answer: frame.answer, event });
  }
  return { format: RECORDING_FORMAT, version: RECORDING_VERSION, title: str(header.title, 'title'), prompt: str(header.prompt, 'prompt'), label: str(header.label, 'label'), frames };
}
