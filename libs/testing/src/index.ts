export * from './deep-freeze.ts';
export * from './fixtures.ts';
