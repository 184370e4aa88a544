// Starts the model host (modelHost.ts). node-llama-cpp is loaded before tsx's loader is
// registered, so its hundreds of modules skip the TypeScript hooks: about half a second less
// per host start. modelHost.ts's own import of it then hits the module cache.
await import('node-llama-cpp');
const { register } = await import('tsx/esm/api');
register();
await import('./modelHost.ts');
