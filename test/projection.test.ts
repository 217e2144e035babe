import { describe, expect, it } from 'vitest';
import { COMPACT_CHECKPOINT_SOURCE, isCompactCheckpointSource } from '../src/index.js';
import { projectSurface } from '../src/projection.js';
import { foldSurface } from '../src/surface.js';
import { assistantMessage, checkpoint, toolResult, userMessage } from './sessions.js';

describe('isCompactCheckpointSource (SPEC §4.5)', () => {
  it('accepts the published marker and the newer kind', () => {
    expect(COMPACT_CHECKPOINT_SOURCE).toEqual({ kind: 'plugin', plugin: 'compact' });
    expect(Object.isFrozen(COMPACT_CHECKPOINT_SOURCE)).toBe(true);
    expect(isCompactCheckpointSource(COMPACT_CHECKPOINT_SOURCE)).toBe(true);
    expect(isCompactCheckpointSource({ kind: 'compact-checkpoint' })).toBe(true);
  });
  it.each([null, undefined, 'compact', { kind: 'plugin' }, { kind: 'plugin', plugin: 'session-reference' }, { kind: 'user' }])(
    'rejects %j',
    (source) => expect(isCompactCheckpointSource(source)).toBe(false),
  );
});

describe('projectSurface (SPEC §8.2)', () => {
  it('projects direct user, assistant (interrupted included) and checkpoint texts, joined by \\n', () => {
    const surface = foldSurface([
      userMessage(1, ['first', 'second']),
      assistantMessage(2, ['answer', 'more'], { interrupted: true }),
      checkpoint(3, 'summary', 99, 99, { kind: 'compact-checkpoint' }),
    ]);
    expect(projectSurface(surface)).toEqual([
      { role: 'user', text: 'first\nsecond' },
      { role: 'assistant', text: 'answer\nmore' },
      { role: 'user', text: 'summary', checkpoint: true },
    ]);
  });

  it('excludes tools, reasoning, system, plugin and context messages, chunks, non-text blocks and empty texts', () => {
    const surface = [
      { type: 'system/message', seq: 1, time: 0, data: { message: { role: 'system', content: [{ type: 'text', text: 'SYSTEM' }] } } },
      userMessage(2, 'PLUGIN', { source: { kind: 'plugin', plugin: '@deepseek-ai/dsh-system-prompt' } }),
      userMessage(3, 'CONTEXT', { source: { kind: 'session-reference' } }),
      userMessage(4, 'CONTEXT2', { source: { kind: 'plugin', plugin: 'session-reference' } }),
      userMessage(5, 'SKILLS', { source: { kind: 'skill-catalog' } }),
      toolResult(6, 'TOOL OUTPUT'),
      { type: 'assistant/chunk', seq: 7, time: 0, data: { text: 'CHUNK' } },
      {
        type: 'assistant/message',
        seq: 8,
        time: 0,
        data: { message: { role: 'assistant', content: [{ type: 'reasoning', text: 'REASONING' }, { type: 'tool-call', name: 'x' }, { type: 'text', text: 'kept' }] } },
      },
      userMessage(9, ''),
      { type: 'user/message', seq: 10, time: 0, data: { role: 'user', content: [{ type: 'image', data: 'IMG' }], source: { kind: 'user' } } },
      { type: 'user/message', seq: 11, time: 0, data: { role: 'user', content: [{ type: 'text', text: 'NOSOURCE' }] } },
    ];
    expect(projectSurface(surface)).toEqual([{ role: 'assistant', text: 'kept' }]);
  });

  it('projects only envelope.display of an enveloped prompt (no recursive snapshots)', () => {
    const event = userMessage(1, '## Referenced sessions\n\n<referenced-sessions>[…]</referenced-sessions>\n\n## My request:\n\nhello @Other', {
      envelope: { version: 1, display: [{ type: 'text', text: 'hello @Other' }, { type: 'image' }], contexts: [] },
    });
    expect(projectSurface([event])).toEqual([{ role: 'user', text: 'hello @Other' }]);
    const broken = userMessage(2, 'MODEL VISIBLE', { envelope: { version: 1 } });
    expect(projectSurface([broken])).toEqual([]);
  });

  it('reads every steering shape; a missing source is a direct user', () => {
    const steering = (seq: number, data: unknown) => ({ type: 'steering/message', seq, time: 0, data });
    expect(
      projectSurface([
        steering(1, { id: 's1', role: 'user', content: [{ type: 'text', text: 'current' }], source: { kind: 'user' } }),
        steering(2, { turn: 1, message: 'legacy string' }),
        steering(3, { turn: 1, message: { role: 'user', content: [{ type: 'text', text: 'legacy object' }] } }),
        steering(4, { turn: 1, content: 'legacy content', source: { kind: 'user' } }),
        steering(5, { turn: 1, content: [{ type: 'text', text: 'legacy blocks' }] }),
        steering(6, { turn: 1, content: 'from a plugin', source: { kind: 'plugin', plugin: 'x' } }),
        steering(7, { turn: 1, message: 'checkpoint-sourced steering', source: COMPACT_CHECKPOINT_SOURCE }),
      ]),
    ).toEqual([
      { role: 'user', text: 'current' },
      { role: 'user', text: 'legacy string' },
      { role: 'user', text: 'legacy object' },
      { role: 'user', text: 'legacy content' },
      { role: 'user', text: 'legacy blocks' },
    ]);
  });

  it('skips malformed data instead of failing', () => {
    const bad = [
      { type: 'user/message', seq: 1, time: 0 },
      { type: 'user/message', seq: 2, time: 0, data: 'text' },
      { type: 'user/message', seq: 3, time: 0, data: { source: { kind: 'user' }, content: 'not an array' } },
      { type: 'user/message', seq: 4, time: 0, data: { source: { kind: 'user' }, content: [null, 1, { type: 'text', text: 5 }] } },
      { type: 'assistant/message', seq: 5, time: 0, data: { message: null } },
      { type: 'steering/message', seq: 6, time: 0, data: null },
    ];
    expect(projectSurface(bad)).toEqual([]);
  });

  it('does not project shadowed events of a compacted session', () => {
    const events = [userMessage(1, 'OLD'), assistantMessage(2, 'OLD ANSWER'), checkpoint(3, 'summary of old', 1, 2), userMessage(4, 'new')];
    expect(projectSurface(foldSurface(events))).toEqual([
      { role: 'user', text: 'summary of old', checkpoint: true },
      { role: 'user', text: 'new' },
    ]);
  });
});
