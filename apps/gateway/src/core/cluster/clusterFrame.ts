import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type { ClusterMessage, WorkspaceMessage } from '../ports/ClusterBus';

/** Heartbeats and goodbyes stay inside a bus; the gateway hears of them as `gatewayGone`. */
export type BusMessage = ClusterMessage | { kind: 'heartbeat' } | { kind: 'bye' };

const FRAME_VERSION = 1;

/** version, sender, then the message: updates and state vectors as bytes, the rest as JSON. */
export function encodeFrame(from: string, message: WorkspaceMessage | BusMessage): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, FRAME_VERSION);
  encoding.writeVarString(encoder, from);
  if (message.kind === 'update' || message.kind === 'sync') {
    const answer = message.kind === 'sync' && message.answer ? { answer: true } : {};
    encoding.writeVarString(encoder, JSON.stringify({ kind: message.kind, docId: message.docId, ...answer }));
    encoding.writeVarUint8Array(encoder, message.kind === 'update' ? message.update : message.stateVector);
  } else {
    encoding.writeVarString(encoder, JSON.stringify(message));
    encoding.writeVarUint8Array(encoder, new Uint8Array(0));
  }
  return encoding.toUint8Array(encoder);
}

export function decodeFrame(frame: Uint8Array): { from: string; message: WorkspaceMessage | BusMessage } {
  const decoder = decoding.createDecoder(frame);
  const version = decoding.readVarUint(decoder);
  if (version !== FRAME_VERSION) throw new Error(`cluster frame version ${version}`);
  const from = decoding.readVarString(decoder);
  const header = JSON.parse(decoding.readVarString(decoder)) as { kind: string; docId?: string; answer?: boolean };
  const bytes = decoding.readVarUint8Array(decoder);
  if (header.kind === 'update') return { from, message: { kind: 'update', docId: String(header.docId), update: bytes } };
  if (header.kind === 'sync') return { from, message: { kind: 'sync', docId: String(header.docId), stateVector: bytes, ...(header.answer ? { answer: true } : {}) } };
  return { from, message: header as WorkspaceMessage | BusMessage };
}
