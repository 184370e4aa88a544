/** What a live document needs of a session: somewhere to send frames, and who it is. */
export interface Subscriber {
  readonly sessionId: string;
  readonly linkId: string;
  send(frame: Uint8Array): void;
}
