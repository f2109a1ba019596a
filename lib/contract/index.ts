/**
 * The public contract of tessera v1 (docs/api.md) as zod schemas: the single source of its
 * TypeScript types, its JSON Schema and its OpenAPI document. Fields may be added; none removed.
 */
export * from './calendar';
export * from './text';
export * from './scope';
export * from './run-request';
export * from './outcome';
export * from './synthesis';
export * from './coverage';
export * from './run-resource';
export * from './run-list';
export * from './http';
export * from './subtask-list';
export * from './routes';
