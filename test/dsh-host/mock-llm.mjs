// A Cordis plugin for the dsh host: an offline LLM provider route (`mock`) that records every
// request it receives and answers with a fixed text, optionally after reasoning and one tool call.
// It registers exactly the way the host's own `@deepseek-ai/dsh-llm-deepseek` does
// (`inject: ['llm']`, `ctx.llm.registerAdapter`), so the agent loop, tools, session log and title
// plugins run unchanged; only the network call is replaced.
//
// Config (the overlay row's `config`):
//   recordFile  absolute path; one JSON line per model call is appended:
//               { provider, model, purpose, system, messages }
//   reply       the text the turn ends with
//   reasoning   optional; a reasoning block streamed first by a call that does not follow a tool result
//   toolCall    optional { name, arguments }: a call that does not follow a tool result answers with
//               this tool call instead of the reply, and the call after the tool's result answers
//               with the reply. One turn is then: reasoning, tool call, tool output, reply.
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
    const { reply, reasoning, toolCall } = this.config;
    const afterTool = messages.at(-1)?.source?.kind === 'tool';
    let index = 0;
    if (reasoning !== undefined && !afterTool) {
      yield { type: 'block-start', index, blockType: 'reasoning' };
      yield { type: 'reasoning-delta', index, text: reasoning };
      yield { type: 'block-end', index, block: { type: 'reasoning', text: reasoning } };
      index += 1;
    }
    if (toolCall !== undefined && !afterTool) {
      const id = `call-${messages.length}`;
      const args = JSON.stringify(toolCall.arguments);
      yield { type: 'block-start', index, blockType: 'tool-call' };
      yield { type: 'tool-call-delta', index, id, name: toolCall.name, argumentsDelta: args };
      yield { type: 'block-end', index, block: { type: 'tool-call', id, name: toolCall.name, arguments: args } };
      yield { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } };
      yield { type: 'finish', reason: { kind: 'tool-calls' } };
      return;
    }
    yield { type: 'block-start', index, blockType: 'text' };
    yield { type: 'text-delta', index, text: reply };
    yield { type: 'block-end', index, block: { type: 'text', text: reply } };
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
