/**
 * `describeReferencedMessage` (SPEC §15.4) on what a real dsh host writes (SPEC §14.3): the recall
 * message that `./dsh` persists after a citing prompt, built with the host's own packages
 * (test/dsh-host.ts). Node-only, like every `./dsh` test: the dsh packages are Node packages.
 */
import { describe, expect, it } from 'vitest';
import { describeReferencedMessage } from '../src/editor/index.js';
import { formatSessionReferenceMention } from '../src/index.js';
import { Conversation, mountHost, preStep, prompt } from './dsh-host.js';

describe('describeReferencedMessage on a dsh recall message (SPEC §14.3, §15.4)', () => {
  it('summarizes the recall message the pre-step listener persists; the readable prompt itself is no composed message', async () => {
    const host = await mountHost();
    const source = new Conversation(host, '/repo').say('plan the migration', 'three steps').compact('Summary: three steps').say('go on', 'step one done');
    const target = new Conversation(host, '/repo');
    const decision = await preStep(host, target.agent, [prompt(`continue ${formatSessionReferenceMention({ sessionId: source.id, label: 'Plan' })} please`)]);
    expect(decision.kind).toBe('enter');
    const [readable, recall] = (decision as { messages: unknown[] }).messages as [Record<string, any>, Record<string, any>];
    expect(Object.isFrozen(recall)).toBe(true);
    const described = describeReferencedMessage(recall)!;
    // The §8.4 rows of the recall source, without its inputIndex; no display or mentions (the prompt is the message before).
    const rows = recall.source.references.map(({ inputIndex, ...row }: { inputIndex: number }) => row);
    expect(described).toEqual({ references: rows });
    expect(described.references).toMatchObject([{ sessionId: source.id, label: 'Plan', compacted: true, truncated: false }]);
    // The same after JSON (a recall message pasted into a UI).
    expect(describeReferencedMessage(JSON.parse(JSON.stringify(recall)))).toEqual(described);
    expect(describeReferencedMessage(readable)).toBeUndefined();
  });
});
