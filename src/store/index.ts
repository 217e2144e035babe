/**
 * The embedded store: sessions without a host (SPEC §11). Web APIs only.
 * (Being built: parseSessionLog, createMemorySessionQuery.)
 * @module
 */
import type { SessionEvent, SessionHeader } from '../types.js';

/** A parsed dsh session log: its header line and its events in log order (SPEC §11.1). */
export interface SessionLog {
  header: SessionHeader;
  events: SessionEvent[];
}
