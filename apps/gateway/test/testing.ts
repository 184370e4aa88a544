/**
 * `@flint/gateway/testing`: not a host API. The parts bench/ and tests measure or drive alone
 * (a stream reader, the completion prompt, an agent tool, the static file handler) and real
 * gateway processes for the cluster's tests. A host composes with `index.ts` only.
 */
export { ChatChunkReader } from '../src/models/chatChunk';
export { sseDecoder } from '../src/models/ProviderHttp';
export { TextRun } from '../src/models/TextRun';
export { fimTemplate } from '../src/core/complete/fimTemplates';
export { buildCompletionContext, type CompletionContext } from '../src/core/complete/completionPrompt';
export { runTool } from '../src/core/thread/threadTools';
export { createStaticHandler } from '../src/transport/staticFiles';
export { createWorkspace, GatewayProcesses, type GatewayProcess } from './gatewayProcesses';
export { turnsOf } from '../src/core/agent/roomTurns';
export { replayThreadTurn } from '../src/core/agent/agentExtension';
