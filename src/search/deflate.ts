/**
 * The parts of fflate that `stored.ts` packs and unpacks kept items with (raw deflate, synchronous),
 * as a module of their own that `stored.ts` imports on first use: a bundler keeps only these
 * three (a dynamic import of fflate itself would keep all of it), and a search that needs neither
 * never loads fflate. fflate's Web build: its default build for Node loads `worker_threads`, for
 * asynchronous calls never made here.
 * @module
 */
export { deflateSync, Inflate, inflateSync } from 'fflate/browser';
