/**
 * How a session's identity and text fields are kept in the catalog's SQLite (see `schema.ts`):
 * exactly (SQLite keeps text as UTF-8, where a lone surrogate would become U+FFFD) and in the
 * order the listing needs.
 * @module
 */
/** A session id as its UTF-16 code units, big-endian: bytewise order is code-unit order (SPEC §11.3). */
export function sidOf(id: string): ArrayBuffer {
  const bytes = new Uint8Array(id.length * 2);
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    bytes[2 * i] = unit >> 8;
    bytes[2 * i + 1] = unit & 0xff;
  }
  return bytes.buffer;
}

/** The session id {@link sidOf} kept. */
export function idOf(sid: ArrayBuffer): string {
  const bytes = new Uint8Array(sid);
  let id = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) id += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
  return id;
}

/** The `cwd` column: the JSON of a non-empty string, `'#'` for any other present value (SPEC §6.3's "other cwd"), `null` for none. */
export function cwdColumn(cwd: unknown): string | null {
  if (cwd === undefined || cwd === null || cwd === '') return null;
  return typeof cwd === 'string' ? JSON.stringify(cwd) : '#';
}

/** The cwd a `cwd` column holds, when it is a non-empty string. */
export function cwdOfColumn(column: string | null): string | undefined {
  return column !== null && column.startsWith('"') ? (JSON.parse(column) as string) : undefined;
}

/** A text column kept as its JSON (exact for lone surrogates), `null` for none. */
export function textColumn(text: string | undefined): string | null {
  return text === undefined ? null : JSON.stringify(text);
}

/** The text {@link textColumn} kept. */
export function textOfColumn(column: string | null): string | undefined {
  return column === null ? undefined : (JSON.parse(column) as string);
}
