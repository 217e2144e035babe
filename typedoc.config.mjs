// API reference (`npm run docs:api`): TypeDoc over the TSDoc of every package entry, written to
// docs/api/ (HTML; gitignored: the source of truth is the TSDoc, and a generated copy in git would
// drift and conflict). The entry points come from package.json's exports map, so a new entry is
// documented without editing this file. CI builds it with warnings as errors.
import { readFileSync } from 'node:fs';

const { exports } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const entryPoints = Object.values(exports)
  .map((target) => (typeof target === 'string' ? target : (target.import ?? target.node)))
  .filter((target) => typeof target === 'string' && target.startsWith('./dist/') && target.endsWith('.js'))
  .map((target) => target.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts'));

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'dsh-session-reference',
  entryPoints,
  tsconfig: './tsconfig.typedoc.json',
  out: './docs/api',
  readme: 'none',
  includeVersion: true,
  // No "defined in" links: a clone's remote may be a local path (CI), which TypeDoc warns about.
  disableSources: true,
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  // The parts SessionReferenceErrorCode is spelled from; the codes themselves are exported as
  // SESSION_REFERENCE_ERROR_CODES.
  intentionallyNotExported: ['PREFIX', 'SUFFIXES'],
  validation: { notExported: true, invalidLink: true, invalidPath: true, rewrittenLink: true, notDocumented: false, unusedMergeModuleWith: true },
  sort: ['source-order'],
};
