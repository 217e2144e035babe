/**
 * The Cron Trigger's own state (SPEC §17.6, issue 27), kept by the catalog object named `''` (never
 * a tenant's: a tenant is a non-empty string, SPEC §17.3): its place in the round over the tenant
 * folders, and every tenant folder a catalog has been fed from. A round lists the folders R2 holds,
 * then visits the known folders R2 no longer listed: a tenant whose last object was deleted
 * straight in R2 (its notifications lost) has no folder to list, and only that second part of the
 * round removes its rows.
 * @module
 */
import type { SqlStorage, SqlStorageValue } from 'cloudflare:workers';
import { check } from '../../errors.js';
import type { CronPlace } from './types.js';

/** The most known folders one call of {@link CronFolders.unseen} returns. */
export const UNSEEN_PAGE = 100;

export class CronFolders {
  constructor(private readonly sql: SqlStorage) {}

  /** The saved place, or `undefined` to start a round. */
  place(): CronPlace | undefined {
    const saved = this.meta('cron');
    return saved === undefined ? undefined : (JSON.parse(String(saved)) as CronPlace);
  }

  /**
   * Saves `place`, marks the folders of `seen` (listed by R2) as seen in this round, and when
   * `roundDone` starts the next round.
   */
  save(place: CronPlace, seen: readonly string[], roundDone: boolean): void {
    const { cursor, after, known } = Object(place) as CronPlace;
    check(
      (cursor === undefined || typeof cursor === 'string') && (after === undefined || typeof after === 'string') && (known === undefined || known === true),
      'INVALID_ARGUMENT',
      'a cron place is { cursor?: string, after?: string, known?: true }',
      place,
    );
    check(Array.isArray(seen) && seen.every((folder) => typeof folder === 'string'), 'INVALID_ARGUMENT', 'seen must be an array of tenant folders', seen);
    const round = this.round();
    for (const folder of seen) this.sql.exec('INSERT OR REPLACE INTO catalog_cron_folders(folder, round) VALUES (?, ?)', folder, round);
    this.setMeta('cron', JSON.stringify({ cursor, after, known }));
    if (roundDone) this.setMeta('cron_round', round + 1);
  }

  /** Known folders after `after` (key order) that R2 did not list in this round, at most {@link UNSEEN_PAGE}. */
  unseen(after: string | undefined): string[] {
    check(after === undefined || typeof after === 'string', 'INVALID_ARGUMENT', 'after must be a tenant folder', after);
    return this.sql
      .exec<{ folder: string }>('SELECT folder FROM catalog_cron_folders WHERE round < ? AND folder > ? ORDER BY folder LIMIT ?', this.round(), after ?? '', UNSEEN_PAGE)
      .toArray()
      .map((row) => row.folder);
  }

  /** Remembers `folder` as one a catalog is fed from (idempotent; not seen in this round). */
  register(folder: string): void {
    check(typeof folder === 'string' && folder !== '', 'INVALID_ARGUMENT', 'a tenant folder must be a non-empty string', folder);
    this.sql.exec('INSERT OR IGNORE INTO catalog_cron_folders(folder, round) VALUES (?, 0)', folder);
  }

  private round(): number {
    return Number(this.meta('cron_round') ?? 1);
  }

  private meta(name: string): SqlStorageValue | undefined {
    return this.sql.exec<{ value: SqlStorageValue }>('SELECT value FROM catalog_meta WHERE name = ?', name).toArray()[0]?.value;
  }

  private setMeta(name: string, value: string | number): void {
    this.sql.exec('INSERT OR REPLACE INTO catalog_meta(name, value) VALUES (?, ?)', name, value);
  }
}
