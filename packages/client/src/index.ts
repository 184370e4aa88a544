export { DocHandle } from './DocHandle';
export {
  FlintClient,
  LOCAL_AWARENESS_ORIGIN,
  REVIEW_ORIGIN,
  type ConnectionStatus,
  type FlintClientOptions,
  type RequestResult,
} from './FlintClient';
export type { Timers, WebSocketLike } from './WebSocketLike';
