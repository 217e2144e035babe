/**
 * Folding for matching (SPEC §16.3, §15.10): the one function that search's words and the word
 * matching of `listCandidates` share.
 * @module
 */

/**
 * `text` folded for matching (SPEC §16.3): lowercased with `toLowerCase()` (no locale, §6.2), NFKD,
 * combining marks (General_Category M) removed, then NFC. ASCII text is only lowercased. Linear in
 * the text; a word or a whole text (a title, a cwd).
 * @example
 * foldWord('Dümen'); // 'dumen'
 * foldWord('İstanbul ﬁle'); // 'istanbul file'
 */
export function foldWord(text: string): string {
  const lower = text.toLowerCase();
  // NFC again after the marks are gone: Hangul syllables, which NFKD splits into their letters
  // (jamo, not marks), come back whole, so a two-syllable word is two letters, not five.
  return /^[\0-\x7f]*$/.test(lower) ? lower : lower.normalize('NFKD').replace(/\p{M}/gu, '').normalize('NFC');
}
