/**
 * `@flint/gateway/testing`: not a host API. The parts bench/ and tests measure or drive alone
 * (a stream reader, the completion prompt, an agent tool, the static file handler) and real
 * gateway processes for the cluster's tests. A host composes with `index.ts` only.
 */
export { ChatChunkReader } from './models/chatChunk';
export { sseDecoder } from './models/ProviderHttp';
export { TextRun } from './models/TextRun';
export { fimTemplate } from './core/complete/fimTemplates';
export { buildCompletionContext, type CompletionContext } from './core/complete/completionPrompt';
export { runTool } from './core/thread/threadTools';
export { createStaticHandler } from './transport/staticFiles';
export { createWorkspace, GatewayProcesses, type GatewayProcess } from './cluster/gatewayProcesses';
