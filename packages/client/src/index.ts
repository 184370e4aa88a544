export { DocHandle } from './DocHandle';
export {
  FlintClient,
  LOCAL_AWARENESS_ORIGIN,
  REVIEW_ORIGIN,
  type ConnectionStatus,
  type FlintClientOptions,
  type RequestResult,
} from './FlintClient';
export type { RemoteFault } from './remoteChanges';
export type { Timers, WebSocketLike } from './WebSocketLike';
export { AdaptiveDebounce, type DebounceOptions } from './completion/AdaptiveDebounce';
export { CompletionCache, type CachedSuggestion } from './completion/CompletionCache';
export type { CompletionResult, CompletionStream } from './completion/CompletionChannel';
export {
  Completer,
  completionSourceOf,
  nextWord,
  typedSince,
  type CompleterOptions,
  type CompleterStats,
  type CompletionSource,
  type EditorState,
  type Suggestion,
} from './completion/Completer';
