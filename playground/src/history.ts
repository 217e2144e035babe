/**
 * The target session's history as the playground counts it for the KV cache (docs/playground.md,
 * "Tokens"): the text of its current surface (compactions folded, SPEC §8.1) as projected for a
 * snapshot (SPEC §8.2: user prompts, assistant text, checkpoints), items joined by a blank line.
 * Tool calls and results, reasoning and chat-template tokens are not in it, so its token count is a
 * lower bound of the prefix a host's cache holds.
 */
import { projectSurface } from '../../src/projection.js';
import type { SessionLog } from '../../src/store/index.js';
import { foldSurface } from '../../src/surface.js';

export function historyText(log: SessionLog): string {
  return projectSurface(foldSurface(log.events)).map((item) => item.text).join('\n\n');
}
