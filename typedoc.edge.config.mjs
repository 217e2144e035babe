// The edge entry's API reference (`npm run docs:api`, after typedoc.config.mjs): src/edge is typed
// against the Workers runtime types (tsconfig.edge.json), whose globals clash with the DOM's that
// the other entries are documented with, so it is its own TypeDoc run, written to docs/api/edge/.
import base from './typedoc.config.mjs';

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  ...base,
  name: 'dsh-session-reference/edge',
  entryPoints: ['./src/edge/index.ts'],
  tsconfig: './tsconfig.edge.json',
  out: './docs/api/edge',
  // The Workers runtime's own types (from `wrangler types`, and src/edge/catalog/cloudflare-workers.d.ts),
  // documented by Cloudflare.
  intentionallyNotExported: [
    'R2Bucket',
    'DurableObjectNamespace',
    'AlarmInvocationInfo',
    'Socket',
    'ExecutionContext',
    'MessageBatch',
    'ScheduledController',
  ],
};
