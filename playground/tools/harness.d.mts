import type { Browser } from 'playwright';

export const PLAYGROUND_DIR: string;
export const CHROMIUM_ARGS: string[];
export function buildPlayground(options?: { outDir?: string }): Promise<string>;
export function serveStatic(dir: string, options?: { prefix?: string }): Promise<{ url: string; close: () => Promise<void> }>;
export function launchChromium(): Promise<Browser>;
