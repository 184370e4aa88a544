export * from './ConnectProxy';
export * from './FakeClock';
export * from './MemorySocketPair';
export * from './property';
export * from './seededRandom';
export * from './gguf';
export * from './fakeProviders';
export * from './wireFuzz';
