import { describe, expect, it } from 'vitest';
import realLog from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import { parseSessionLog, parseSessionLogHeader } from '../src/store/index.js';
import { concatBytes } from './fixtures/base64.js';
import { expectCode } from './helpers.js';

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text);

const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const HEADER = '{"type":"session","version":3,"id":"s-1","createdAt":1700000000000,"cwd":"/w"}';
const event = (seq: number, type = 'step/start', extra = '') => `{"type":"${type}","seq":${seq},"time":${seq},"data":{}${extra}}`;
const log = (...lines: string[]) => lines.join('\n');

describe('parseSessionLog on the real dsh log (SPEC §11.1, §11.4)', () => {
  const parsed = parseSessionLog(realLog);

  it('reads the header line with all its fields', () => {
    expect(parsed.header).toEqual({
      type: 'session',
      version: 3,
      id: REAL_ID,
      createdAt: 1789415426008,
      cwd: '/home/user/projects/01_unicorn/77-Dumen',
      isSeeded: false,
      delegationDepth: 0,
      agentPreset: 'code',
    });
  });

  it('keeps every one of the 99 event lines, in log order (seq 0..98)', () => {
    expect(parsed.events).toHaveLength(99);
    expect(parsed.events.map((e) => e.seq)).toEqual(Array.from({ length: 99 }, (_, i) => i));
  });

  it('keeps events whole: types, data and surface ops as dsh wrote them', () => {
    const count = (type: string) => parsed.events.filter((e) => e.type === type).length;
    expect(count('assistant/message')).toBe(12);
    expect(count('tool/call')).toBe(21);
    expect(count('tool/result')).toBe(21);
    expect(count('user/message')).toBe(3);
    expect(count('agent/inbox/spliced')).toBe(2);
    const title = parsed.events.find((e) => e.type === 'session/title');
    expect(title).toMatchObject({ seq: 14, data: { title: 'Bu projeyi gemini ile geliştiriyorduk', source: { kind: 'fallback' } } });
    const prompt = parsed.events.find((e) => e.type === 'user/message');
    expect(prompt?.surfaceOp).toBe('append');
    expect(prompt?.data).toMatchObject({ source: { kind: 'user' }, content: [{ type: 'text' }] });
    expect(((prompt?.data as { content: { text: string }[] }).content[0]!.text)).toMatch(/^Bu projeyi gemini ile/);
  });

  it('parses the same from a string, UTF-8 bytes, an ArrayBuffer and an offset view', () => {
    const bytes = utf8(realLog);
    expect(parseSessionLog(bytes)).toEqual(parsed);
    expect(parseSessionLog(bytes.buffer.slice(0) as ArrayBuffer)).toEqual(parsed);
    const padded = concatBytes(utf8('xxxx'), bytes, utf8('yyyy'));
    expect(parseSessionLog(padded.subarray(4, 4 + bytes.length))).toEqual(parsed);
  });

  it('skips top-level packed chunk rows appended to the real log', () => {
    const withChunks =
      realLog +
      log(
        '{"type":"text-chunks","seq":99,"time0":1,"index":0,"dt":[1],"texts":["x"]}',
        '{"type":"tool-call-chunks","seq":100,"index":0,"dt":[],"id":"c"}',
        event(101, 'step/end'),
        '',
      );
    const events = parseSessionLog(withChunks).events;
    expect(events).toHaveLength(100);
    expect(events.at(-1)).toMatchObject({ type: 'step/end', seq: 101 });
  });

  it('reads the header alone with parseSessionLogHeader', () => {
    expect(parseSessionLogHeader(realLog)).toEqual(parsed.header);
    expect(parseSessionLogHeader(utf8(realLog))).toEqual(parsed.header);
  });
});

describe('parseSessionLog line rules (SPEC §11.1)', () => {
  it('skips chunk rows and lines of unknown shape, keeps every event field', () => {
    const parsed = parseSessionLog(
      log(
        HEADER,
        event(1, 'user/message', ',"surfaceOp":"append","extra":{"k":[1]}'),
        '{"type":"text-chunks","seq":2,"texts":["a"]}',
        '{"type":"reasoning-chunks","seq":3}',
        '[1,2,3]',
        'null',
        '42',
        '"a string"',
        'true',
        '{"seq":4,"time":0}',
        '{"type":5,"seq":5}',
        '{"type":"x"}',
        '{"type":"x","seq":"6"}',
        '{"type":"session","version":3,"id":"other","createdAt":1}',
        event(7, 'custom/unknown-type'),
        '',
      ),
    );
    expect(parsed.events).toEqual([
      { type: 'user/message', seq: 1, time: 1, data: {}, surfaceOp: 'append', extra: { k: [1] } },
      { type: 'custom/unknown-type', seq: 7, time: 7, data: {} },
    ]);
  });

  it('ignores a torn last line (no final newline, not JSON)', () => {
    const parsed = parseSessionLog(log(HEADER, event(1), '{"type":"step/start","seq":2,"ti'));
    expect(parsed.events.map((e) => e.seq)).toEqual([1]);
  });

  it('keeps a last line without final newline when it is valid JSON', () => {
    const parsed = parseSessionLog(log(HEADER, event(1), event(2)));
    expect(parsed.events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('rejects the same torn text once a newline follows it, naming its line', () => {
    const error = expectCode(
      () => parseSessionLog(log(HEADER, event(1), '{"type":"step/start","seq":2,"ti', '')),
      'SESSION_REFERENCE_INVALID_LOG',
    );
    expect(error.message).toMatch(/\bline 3\b/);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('rejects a non-JSON line in the middle with its 1-based line number', () => {
    const error = expectCode(
      () => parseSessionLog(log(HEADER, event(1), event(2), 'oops {', event(4), event(5), '')),
      'SESSION_REFERENCE_INVALID_LOG',
    );
    expect(error.message).toMatch(/\bline 4\b/);
    expect(error.message).toContain('"oops {"');
    expectCode(() => parseSessionLog(log(HEADER, '{"type":"x","seq":1,}', event(2))), 'SESSION_REFERENCE_INVALID_LOG');
  });

  it('counts lines after CRLF, blank lines and a BOM correctly', () => {
    const text = '\uFEFF' + [HEADER, event(1), '', '  \t', event(2), 'bad', ''].join('\r\n').replace(/\r\n$/, '\n');
    expect(expectCode(() => parseSessionLog(text), 'SESSION_REFERENCE_INVALID_LOG').message).toMatch(/\bline 6\b/);
  });

  it('skips blank lines and accepts CRLF line ends', () => {
    const parsed = parseSessionLog([HEADER, event(1), '', ' \t ', event(2), ''].join('\r\n'));
    expect(parsed.header.id).toBe('s-1');
    expect(parsed.events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('splits on \\n only: raw U+2028, U+2029, U+0085 inside strings are data', () => {
    const text = `a\u2028b\u2029c\u0085d\u00a0e`;
    const line = `{"type":"note","seq":1,"time":0,"data":{"text":"${text}"}}`;
    const parsed = parseSessionLog(log(HEADER, line, event(2), ''));
    expect(parsed.events).toHaveLength(2);
    expect(parsed.events[0]!.data).toEqual({ text });
    const bytes = parseSessionLog(utf8(log(HEADER, line, event(2), '')));
    expect(bytes).toEqual(parsed);
  });

  it('ignores a leading UTF-8 BOM in text and in bytes, and only a leading one', () => {
    const plain = parseSessionLog(log(HEADER, event(1), ''));
    expect(parseSessionLog('\uFEFF' + log(HEADER, event(1), ''))).toEqual(plain);
    expect(parseSessionLog(concatBytes(new Uint8Array([0xef, 0xbb, 0xbf]), utf8(log(HEADER, event(1), ''))))).toEqual(plain);
    expect(parseSessionLogHeader('\uFEFF' + HEADER)).toEqual(plain.header);
    expect(parseSessionLogHeader(concatBytes(new Uint8Array([0xef, 0xbb, 0xbf]), utf8(HEADER)))).toEqual(plain.header);
    expectCode(() => parseSessionLog(log(HEADER, '\uFEFF' + event(1), event(2))), 'SESSION_REFERENCE_INVALID_LOG');
    expectCode(() => parseSessionLog('\uFEFF\uFEFF' + HEADER), 'SESSION_REFERENCE_INVALID_LOG');
  });

  it('accepts a log that is only a header, with or without final newline', () => {
    expect(parseSessionLog(HEADER)).toEqual({ header: JSON.parse(HEADER), events: [] });
    expect(parseSessionLog(HEADER + '\n')).toEqual({ header: JSON.parse(HEADER), events: [] });
  });
});

describe('parseSessionLog header and input errors (SPEC §11.1, §10)', () => {
  const badHeaders: Array<[string, string]> = [
    ['empty input', ''],
    ['a BOM only', '\uFEFF'],
    ['an empty first line', '\n' + HEADER + '\n'],
    ['a torn header', '{"type":"session","version":3,"id":"s-1","crea'],
    ['not JSON', 'hello\n'],
    ['an event first', event(1) + '\n' + HEADER + '\n'],
    ['an array', '[]\n'],
    ['wrong type', '{"type":"sessions","version":3,"id":"s","createdAt":1}\n'],
    ['no version', '{"type":"session","id":"s","createdAt":1}\n'],
    ['a string version', '{"type":"session","version":"3","id":"s","createdAt":1}\n'],
    ['a fractional version', '{"type":"session","version":3.5,"id":"s","createdAt":1}\n'],
    ['no id', '{"type":"session","version":3,"createdAt":1}\n'],
    ['a numeric id', '{"type":"session","version":3,"id":7,"createdAt":1}\n'],
    ['no createdAt', '{"type":"session","version":3,"id":"s"}\n'],
    ['a string createdAt', '{"type":"session","version":3,"id":"s","createdAt":"2024"}\n'],
  ];
  for (const [name, text] of badHeaders) {
    it(`rejects a log whose header is ${name} as INVALID_LOG line 1`, () => {
      expect(expectCode(() => parseSessionLog(text), 'SESSION_REFERENCE_INVALID_LOG').message).toMatch(/\bline 1\b/);
      expect(expectCode(() => parseSessionLogHeader(text), 'SESSION_REFERENCE_INVALID_LOG').message).toMatch(/\bline 1\b/);
      expectCode(() => parseSessionLog(utf8(text)), 'SESSION_REFERENCE_INVALID_LOG');
    });
  }

  it('accepts an empty-string id and extra header fields', () => {
    const header = parseSessionLogHeader('{"type":"session","version":4,"id":"","createdAt":0,"future":{"x":1}}');
    expect(header).toEqual({ type: 'session', version: 4, id: '', createdAt: 0, future: { x: 1 } });
  });

  it('rejects bytes that are not valid UTF-8 in any complete line, naming the line (SPEC §11.1)', () => {
    const good = utf8(log(HEADER, event(1), ''));
    const cases = [
      concatBytes(good, new Uint8Array([0xff, 0x0a])),
      concatBytes(good, utf8('{"type":"x","seq":2,"data":"'), new Uint8Array([0xc3]), utf8('"}\n')),
      concatBytes(good, new Uint8Array([0xed, 0xa0, 0x80, 0x0a])), // an encoded surrogate
    ];
    for (const bytes of cases) {
      expect(expectCode(() => parseSessionLog(bytes), 'SESSION_REFERENCE_INVALID_LOG').message).toMatch(/line 3 is not valid UTF-8/);
    }
    // A torn last line cut inside a code point is a torn line, not an error (SPEC §11.1).
    expect(parseSessionLog(concatBytes(good, new Uint8Array([0xe2, 0x82]))).events).toHaveLength(1);
    expectCode(() => parseSessionLogHeader(concatBytes(utf8('{"type":"session","version":3,"id":"'), new Uint8Array([0xff]), utf8('","createdAt":1}\n'))), 'SESSION_REFERENCE_INVALID_LOG');
  });

  it('rejects inputs that are neither a string nor bytes as INVALID_ARGUMENT', () => {
    const inputs: unknown[] = [undefined, null, 42, true, {}, [HEADER], new Uint16Array(4), new Int8Array(4), new DataView(new ArrayBuffer(4)), { length: 0 }];
    for (const input of inputs) {
      expectCode(() => parseSessionLog(input as string), 'SESSION_REFERENCE_INVALID_ARGUMENT');
      expectCode(() => parseSessionLogHeader(input as string), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    }
  });
});

describe('parseSessionLogHeader reads the first line only (SPEC §11.1, §12.1)', () => {
  it('does not parse or decode anything after the first line', () => {
    const rest = concatBytes(utf8('\nnot json at all\n'), new Uint8Array([0xff, 0xfe, 0x0a]), utf8('{"torn'));
    const bytes = concatBytes(utf8(HEADER), rest);
    expect(parseSessionLogHeader(bytes)).toEqual(JSON.parse(HEADER));
    expect(parseSessionLogHeader(HEADER + '\nnot json\n')).toEqual(JSON.parse(HEADER));
    expectCode(() => parseSessionLog(bytes), 'SESSION_REFERENCE_INVALID_LOG');
  });

  it('works on a prefix of the log that holds the whole first line', () => {
    const bytes = utf8(realLog);
    const prefix = bytes.subarray(0, bytes.indexOf(0x0a) + 10);
    expect(parseSessionLogHeader(prefix).id).toBe(REAL_ID);
    expectCode(() => parseSessionLogHeader(bytes.subarray(0, 40)), 'SESSION_REFERENCE_INVALID_LOG');
  });
});

describe('parseSessionLog cost (SPEC §11.1: linear in the input)', () => {
  it('parses 50000 lines and a 4 MB line quickly', () => {
    const lines = [HEADER];
    for (let seq = 1; seq <= 50_000; seq++) lines.push(event(seq));
    lines.push(`{"type":"big","seq":50001,"time":0,"data":"${'x'.repeat(4_000_000)}"}`);
    const parsed = parseSessionLog(lines.join('\n') + '\n');
    expect(parsed.events).toHaveLength(50_001);
    expect((parsed.events.at(-1)!.data as string).length).toBe(4_000_000);
    expect(parseSessionLogHeader(lines.join('\n'))).toEqual(JSON.parse(HEADER));
  });
});
