import { defineConfig } from 'vitest/config';

// Node project only for now; the runtime matrix (Deno, Bun, workerd, Chromium) is added on top.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
  },
});
