import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import { asClientMessage, type ClientMessage, type ServerMessage } from './messages';

/** Bumped on any incompatible change to frames or messages. */
export const PROTOCOL_VERSION = 1;

/** The first byte of every frame ([P1]). */
export const Channel = { Control: 0, Sync: 1, Awareness: 2 } as const;
export type Channel = (typeof Channel)[keyof typeof Channel];

/** A decoded frame. `payload` of a doc frame is a view into the frame, not a copy. */
export type Frame<C> =
  | { channel: typeof Channel.Control; message: C }
  | { channel: typeof Channel.Sync; docId: string; payload: Uint8Array }
  | { channel: typeof Channel.Awareness; docId: string; payload: Uint8Array };

export const maxDocIdChars = 64;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

export function encodeControl(message: ClientMessage | ServerMessage): Uint8Array {
  const json = textEncoder.encode(JSON.stringify(message));
  const frame = new Uint8Array(json.length + 1);
  frame[0] = Channel.Control;
  frame.set(json, 1);
  return frame;
}

/** Frames a y-protocols sync or awareness message for one document ([P2]). */
export function encodeDocFrame(
  channel: typeof Channel.Sync | typeof Channel.Awareness,
  docId: string,
  payload: Uint8Array,
): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeUint8(encoder, channel);
  encoding.writeVarString(encoder, docId);
  encoding.writeUint8Array(encoder, payload);
  return encoding.toUint8Array(encoder);
}

/** Starts a doc frame whose payload the caller writes straight into the encoder (no copy). */
export function startDocFrame(
  channel: typeof Channel.Sync | typeof Channel.Awareness,
  docId: string,
): encoding.Encoder {
  const encoder = encoding.createEncoder();
  encoding.writeUint8(encoder, channel);
  encoding.writeVarString(encoder, docId);
  return encoder;
}

/** Why a frame could not be decoded. Every such frame closes its socket with MalformedFrame. */
export type DecodeError = { error: 'empty' | 'unknown_channel' | 'bad_doc_id' | 'bad_json' | 'bad_message' };

function decodeFrame<C>(bytes: Uint8Array, parse: (json: unknown) => C | null): Frame<C> | DecodeError {
  if (bytes.length === 0) return { error: 'empty' };
  const channel = bytes[0];
  if (channel === Channel.Control) {
    let json: unknown;
    try {
      json = JSON.parse(textDecoder.decode(bytes.subarray(1)));
    } catch {
      // Invalid UTF-8 or JSON is the client's fault, reported as a value, not thrown.
      return { error: 'bad_json' };
    }
    const message = parse(json);
    return message === null ? { error: 'bad_message' } : { channel, message };
  }
  if (channel === Channel.Sync || channel === Channel.Awareness) {
    const decoder = decoding.createDecoder(bytes);
    decoding.readUint8(decoder);
    let docId: string;
    try {
      docId = decoding.readVarString(decoder);
    } catch {
      // lib0 throws on a truncated length prefix or invalid UTF-8.
      return { error: 'bad_doc_id' };
    }
    if (docId.length === 0 || docId.length > maxDocIdChars) return { error: 'bad_doc_id' };
    return { channel, docId, payload: bytes.subarray(decoder.pos) };
  }
  return { error: 'unknown_channel' };
}

export function isDecodeError<C>(value: Frame<C> | DecodeError): value is DecodeError {
  return 'error' in value;
}

/** Decodes a frame a client sent; control messages are validated field by field. */
export function decodeClientFrame(bytes: Uint8Array): Frame<ClientMessage> | DecodeError {
  return decodeFrame(bytes, asClientMessage);
}

/** Decodes a frame the gateway sent. The gateway is trusted, so messages are not re-validated. */
export function decodeServerFrame(bytes: Uint8Array): Frame<ServerMessage> | DecodeError {
  return decodeFrame(bytes, (json) =>
    typeof json === 'object' && json !== null && 'type' in json ? (json as ServerMessage) : null,
  );
}
