/**
 * Terminal-safe printing of untrusted strings (SPEC §12.2).
 * @module
 */

/** The controls JSON writes in short form; every other one is written as `\uXXXX`. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };

/**
 * `text` with every C0 and C1 control character (U+0000–U+001F, U+007F–U+009F) escaped — `\b`,
 * `\t`, `\n`, `\f` and `\r` as JSON writes them, the others as `\u001b`, `\u009b`, … — so no id,
 * label, cwd or text can drive the terminal: no escape sequence, no bell, no carriage return
 * (SPEC §12.2). With `keepNewlines`, `\n` stays a line break, for multi-line output (a prompt,
 * pretty-printed JSON). Applied to JSON text the result is still exact JSON with the same data: a
 * raw control can only stand inside a string there, where its escape means the same character.
 */
export function escapeControls(text: string, keepNewlines = false): string {
  return text.replace(keepNewlines ? /[\0-\t\v-\x1f\x7f-\x9f]/g : /[\0-\x1f\x7f-\x9f]/g, (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
