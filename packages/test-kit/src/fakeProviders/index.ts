export * from './FakeOpenAIServer';
export * from './FakeScript';
export * from './WireEvent';
export * from './FakeFimServer';
