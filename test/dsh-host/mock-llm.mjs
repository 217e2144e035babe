// A Cordis plugin for the dsh host: an offline LLM provider route (`mock`) that records every
// request it receives and answers with a fixed text. It registers exactly the way the host's own
// `@deepseek-ai/dsh-llm-deepseek` does (`inject: ['llm']`, `ctx.llm.registerAdapter`), so the
// agent loop, session log and title plugins run unchanged; only the network call is replaced.
//
// Config (the overlay row's `config`):
//   recordFile  absolute path; one JSON line per model call is appended:
//               { provider, model, purpose, system, messages }
//   reply       the text every call answers with
import { appendFileSync } from 'node:fs';
import { LlmAdapter } from '@deepseek-ai/dsh-llm';

export const name = 'llm-mock';
export const inject = ['llm'];

/** The provider route this plugin registers; the overlay points `agent-default-model` at it. */
export const PROVIDER = 'mock';

class MockAdapter extends LlmAdapter {
  constructor(config) {
    super();
    this.config = config;
  }

  providerInfo(provider) {
    return { id: provider, name: 'Offline mock' };
  }

  listModels(provider) {
    return Promise.resolve([{ provider, id: 'mock-model', name: 'Mock model', inputModalities: ['text'] }]);
  }

  resolveModel(provider, model) {
    return Promise.resolve({ provider, id: model, name: model, inputModalities: ['text'], context: { contextWindow: 1_000_000 } });
  }

  async *stream(options) {
    const { provider, model, purpose, system, messages } = options;
    appendFileSync(this.config.recordFile, JSON.stringify({ provider, model, purpose, system, messages }) + '\n');
    const text = this.config.reply;
    yield { type: 'block-start', index: 0, blockType: 'text' };
    yield { type: 'text-delta', index: 0, text };
    yield { type: 'block-end', index: 0, block: { type: 'text', text } };
    yield { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } };
    yield { type: 'finish', reason: { kind: 'stop' } };
  }
}

export function apply(ctx, config) {
  if (typeof config?.recordFile !== 'string' || typeof config?.reply !== 'string') {
    throw new Error('llm-mock: config needs a string recordFile and a string reply');
  }
  ctx.llm.registerAdapter([PROVIDER], new MockAdapter(config));
}
