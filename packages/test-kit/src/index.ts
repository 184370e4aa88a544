export * from './FakeClock';
export * from './MemorySocketPair';
export * from './seededRandom';
export * from './gguf';
export * from './fakeProviders';
export * from './wireFuzz';
