import { describe, expect, inject, it } from 'vitest';

/** Which runtime is executing this file, judged from globals only (works in all five). */
function detectRuntime(): string {
  const g = globalThis as {
    Deno?: { version?: { deno?: string } };
    Bun?: { version?: string };
    process?: { release?: { name?: string }; versions?: { node?: string } };
    navigator?: { userAgent?: string };
    window?: unknown;
    document?: unknown;
  };
  if (typeof g.Deno?.version?.deno === 'string') return 'deno';
  if (typeof g.Bun?.version === 'string') return 'bun';
  const ua = g.navigator?.userAgent ?? '';
  if (ua === 'Cloudflare-Workers') return 'workerd';
  if (g.window !== undefined && g.document !== undefined && /Chrome\//.test(ua)) return 'chromium';
  if (g.process?.release?.name === 'node') return 'node';
  return `unknown (${ua})`;
}

describe('runtime matrix (SPEC §1.3)', () => {
  it('runs in the runtime its project claims', () => {
    expect(detectRuntime()).toBe(inject('expectedRuntime'));
  });

  it('has the Web APIs the core relies on (SPEC §1.1)', () => {
    expect(typeof TextEncoder).toBe('function');
    expect(typeof TextDecoder).toBe('function');
    expect(typeof AbortController).toBe('function');
    expect(typeof AbortSignal).toBe('function');
    expect(typeof structuredClone).toBe('function');
    expect(new TextDecoder().decode(new TextEncoder().encode('héllo 🎉'))).toBe('héllo 🎉');
  });
});
