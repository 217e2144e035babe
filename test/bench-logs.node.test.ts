/**
 * The generated logs of the store benches (bench/store-logs.ts `writeLog`) are what they say: a
 * compact checkpoint every 200 turns replaces everything on the surface since the previous one
 * (SPEC §8.2), so a compacted log's folded surface stays one checkpoint plus at most 200 turns
 * however long the log is; without compaction the surface keeps every message. (Their replace
 * endpoints once named events off the surface, so nothing was replaced and a 1 GiB log's surface
 * kept every message, which the store-rss and store-edge rows then measured.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLog } from '../bench/store-logs.js';
import { parseSessionLog } from '../src/store/index.js';
import { foldSurface } from '../src/surface.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Surface events per turn: the user message, and an assistant message and a tool result for each of 3 steps. */
const PER_TURN = 7;

function surfaceOf(compacted: boolean, bytes: number) {
  const path = join(dir, `log-${compacted}-${bytes}.jsonl`);
  const events = writeLog(path, bytes, 2, 'bench-log', '/work/bench', compacted);
  const log = parseSessionLog(readFileSync(path, 'utf8'));
  expect(log.events).toHaveLength(events);
  const turns = log.events.filter((event) => event.type === 'turn/start').length;
  return { turns, surface: foldSurface(log.events) };
}

describe('bench writeLog (bench/store-logs.ts)', () => {
  it.each([16, 40])('a compacted log of %i MB folds to the last checkpoint and the turns after it', (mb) => {
    const { turns, surface } = surfaceOf(true, mb * 1_000_000);
    expect(turns).toBeGreaterThan(400);
    const checkpoint = Math.floor(turns / 200) * 200;
    const first = surface[0]!.data as { id: string; source: { kind: string } };
    expect(first.id).toBe(`k${checkpoint}`);
    expect(first.source.kind).toBe('plugin');
    expect(surface).toHaveLength(1 + (turns - checkpoint) * PER_TURN);
  });

  it('without compaction the surface keeps every message of every turn', () => {
    const { turns, surface } = surfaceOf(false, 16_000_000);
    expect(turns).toBeGreaterThan(400);
    expect(surface).toHaveLength(turns * PER_TURN);
    expect(surface.some((event) => event.surfaceOp !== 'append')).toBe(false);
  });
});

describe('the real-shaped log of bench/store-real.ts (SPEC §11.2.6)', () => {
  it('is the real log repeated with seqs renumbered: seqs increase, every other byte as dsh wrote it', async () => {
    const { writeRealShapedLog } = await import('../bench/store-real.js');
    const path = join(dir, 'real.jsonl');
    const { lines, messages } = writeRealShapedLog(path, 1_000_000);
    const text = readFileSync(path, 'utf8');
    const log = parseSessionLog(text);
    expect(log.header.id).toBe('real-100mib');
    expect(text.split('\n').length - 1).toBe(lines);
    const seqs = log.events.map((event) => event.seq);
    expect(seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!)).toBe(true);
    expect(log.events.filter((event) => /^(user|assistant|steering)\/message$/.test(event.type))).toHaveLength(messages);
    const real = readFileSync(new URL('../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl', import.meta.url), 'utf8').split('\n');
    const strip = (line: string) => line.replace(/"seq":\d+/, '"seq":0');
    expect(text.split('\n').slice(1, real.length - 1).map(strip)).toEqual(real.slice(1, -1).map(strip));
  });
});
