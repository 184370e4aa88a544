export * from './closeCodes';
export * from './frames';
export * from './messages';
export * from './paths';
export * from './search';
export * from './terminal';
export * from './thread';
