import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { z } from "zod";
import { JsonLineReader, type JsonLineProblem } from "../../src/core/index.js";

const messageSchema = z.object({ jsonrpc: z.literal("2.0"), id: z.number() });

/** A reader over a stream it is fed by hand, with what it handed over. */
function reader(maxLineBytes?: number): { input: PassThrough; messages: [number, string][]; problems: JsonLineProblem[]; reader: JsonLineReader<z.infer<typeof messageSchema>> } {
  const input = new PassThrough();
  const messages: [number, string][] = [];
  const problems: JsonLineProblem[] = [];
  const made = new JsonLineReader(input, messageSchema, { message: (m, line) => messages.push([m.id, line]), problem: (p) => problems.push(p) }, maxLineBytes === undefined ? {} : { maxLineBytes });
  return { input, messages, problems, reader: made };
}

describe("JsonLineReader", () => {
  test("hands over each line as a message, across chunks, without its CR, skipping blank lines", () => {
    const { input, messages, problems } = reader();
    input.write('{"jsonrpc":"2.0",');
    input.write('"id":1}\r\n\n  \n{"jsonrpc":"2.0","id":2}\n{"jsonrpc"');
    input.write(':"2.0","id":3}\n');
    assert.deepEqual(messages, [[1, '{"jsonrpc":"2.0","id":1}'], [2, '{"jsonrpc":"2.0","id":2}'], [3, '{"jsonrpc":"2.0","id":3}']]);
    assert.deepEqual(problems, []);
  });

  test("a line that is not JSON, or not a message, stops it: what comes after is not read", () => {
    const garbage = reader();
    garbage.input.write('loading weights... done\n{"jsonrpc":"2.0","id":1}\n');
    assert.deepEqual(garbage.problems, [{ kind: "not-json", line: "loading weights... done" }]);
    assert.deepEqual(garbage.messages, []);
    const other = reader();
    other.input.write('{"jsonrpc":"2.0","id":1}\n{"id":"x"}\n{"jsonrpc":"2.0","id":2}\n');
    assert.deepEqual(other.messages.map(([id]) => id), [1]);
    assert.deepEqual(other.problems, [{ kind: "not-message", line: '{"id":"x"}' }]);
  });

  test("a line growing past the cap stops it with its first 200 bytes, however the bytes arrive; without a cap it grows", () => {
    const capped = reader(1000);
    capped.input.write(`{"jsonrpc":"2.0","id":1}\n${"a".repeat(600)}`);
    assert.deepEqual(capped.problems, []);
    capped.input.write("b".repeat(600));
    assert.deepEqual(capped.messages.map(([id]) => id), [1]);
    assert.deepEqual(capped.problems, [{ kind: "too-long", maxLineBytes: 1000, start: "a".repeat(200) }]);
    const free = reader();
    free.input.write(`{"jsonrpc":"2.0","id":1,"pad":"${"x".repeat(100_000)}"}\n`);
    assert.deepEqual([free.messages.map(([id]) => id), free.problems], [[1], []]);
  });

  test("stop() leaves later lines unread, and a handler that stops it ends the lines of its chunk", () => {
    const { input, messages, reader: made } = reader();
    input.write('{"jsonrpc":"2.0","id":1}\n');
    made.stop();
    input.write('{"jsonrpc":"2.0","id":2}\n');
    assert.deepEqual(messages.map(([id]) => id), [1]);
    const input2 = new PassThrough();
    const seen: number[] = [];
    const stopping: JsonLineReader<z.infer<typeof messageSchema>> = new JsonLineReader(input2, messageSchema, { message: (m) => (seen.push(m.id), stopping.stop()), problem: () => assert.fail("no problem expected") });
    input2.write('{"jsonrpc":"2.0","id":1}\n{"jsonrpc":"2.0","id":2}\n');
    assert.deepEqual(seen, [1]);
  });
});
