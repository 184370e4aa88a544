export * from './FakeClock';
export * from './MemorySocketPair';
export * from './seededRandom';
