import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as awarenessProtocol from 'y-protocols/awareness';

/**
 * What went wrong applying something the gateway relayed. The client reports it and goes on:
 * a bad frame from one participant must not stop this tab from working.
 */
export interface RemoteFault {
  docId: string;
  channel: 'sync' | 'awareness';
  message: string;
}

/**
 * Applies an awareness update, leaving out entries whose state is not a JSON object (or null):
 * y-protocols parses every entry in place and throws at the first bad one, leaving the earlier
 * ones applied without a change event. Returns what was left out or failed, if anything.
 */
export function applyRemoteAwareness(awareness: awarenessProtocol.Awareness, payload: Uint8Array, origin: unknown): string | null {
  let problem: string | null = null;
  const decoder = decoding.createDecoder(payload);
  const kept = encoding.createEncoder();
  const entries: Array<[number, number, string]> = [];
  try {
    const count = decoding.readVarUint(decoder);
    for (let i = 0; i < count; i++) {
      const entry: [number, number, string] = [decoding.readVarUint(decoder), decoding.readVarUint(decoder), decoding.readVarString(decoder)];
      if (isStateJson(entry[2])) entries.push(entry);
      else problem = `an awareness state that is not JSON from client ${entry[0]}`;
    }
  } catch (error) {
    return `an awareness update that does not decode (${String(error)})`;
  }
  if (entries.length === 0) return problem;
  encoding.writeVarUint(kept, entries.length);
  for (const [clientId, clock, state] of entries) {
    encoding.writeVarUint(kept, clientId);
    encoding.writeVarUint(kept, clock);
    encoding.writeVarString(kept, state);
  }
  try {
    awarenessProtocol.applyAwarenessUpdate(awareness, encoding.toUint8Array(kept), origin);
  } catch (error) {
    // A listener (an editor drawing a cursor) choked on a state: the states are in; say so.
    return `an awareness state a listener could not use (${String(error)})`;
  } finally {
    // y-protocols keeps a clock per client id for good, even once its state is gone: a peer
    // that cycles through ids would grow every tab's memory without end. The gateway relays
    // states in order, so a removed id's clock is not needed to refuse a stale one.
    for (const [clientId, , state] of entries) {
      if (state === 'null' && clientId !== awareness.clientID && !awareness.states.has(clientId)) awareness.meta.delete(clientId);
    }
  }
  return problem;
}

function isStateJson(json: string): boolean {
  try {
    const state: unknown = JSON.parse(json);
    return state === null || (typeof state === 'object' && !Array.isArray(state));
  } catch {
    return false; // converted: the entry is left out and reported
  }
}
