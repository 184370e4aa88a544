export * from './writeGguf';
export * from './makeTinyLlamaGguf';
