export * from './deep-freeze.ts';
export * from './fixtures.ts';
export * from './endpoints-fixture.ts';
export * from './prng.ts';
export * from './hint-fixtures.ts';
