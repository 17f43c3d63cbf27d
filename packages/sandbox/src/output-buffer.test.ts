import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutputBuffer } from "./output-buffer.js";

describe("OutputBuffer", () => {
  it("keeps everything when under the limit", () => {
    const b = new OutputBuffer(100);
    b.push(Buffer.from("hello "));
    b.push(Buffer.from("world"));
    assert.equal(b.toString(), "hello world");
    assert.equal(b.truncated, false);
    assert.equal(b.totalBytes, 11);
  });

  it("keeps head and tail and counts the dropped middle", () => {
    const b = new OutputBuffer(10);
    for (let i = 0; i < 100; i++) b.push(Buffer.from(String(i % 10)));
    assert.equal(b.truncated, true);
    assert.equal(b.droppedBytes, 90);
    const s = b.toString();
    assert.ok(s.startsWith("01234\n"), s);
    assert.ok(s.endsWith("\n56789"), s);
    assert.match(s, /90 bytes of output truncated/);
  });

  it("handles one chunk larger than the whole budget", () => {
    const b = new OutputBuffer(8);
    b.push(Buffer.from("abcdefghijklmnopqrstuvwxyz"));
    assert.equal(b.droppedBytes, 18);
    const s = b.toString();
    assert.ok(s.startsWith("abcd\n"));
    assert.ok(s.endsWith("\nwxyz"));
  });

  it("ring wraps correctly across many uneven chunks", () => {
    const b = new OutputBuffer(20);
    let all = "";
    for (let i = 0; i < 50; i++) {
      const piece = `<${i}>`;
      all += piece;
      b.push(Buffer.from(piece));
    }
    const s = b.toString();
    assert.ok(s.startsWith(all.slice(0, 10)));
    assert.ok(s.endsWith(all.slice(-10)), `${s} vs ${all.slice(-10)}`);
    assert.equal(b.droppedBytes, all.length - 20);
  });

  it("never splits a multi-byte character, even when chunks split it", () => {
    const text = "é".repeat(50) + "€".repeat(50); // 2-byte and 3-byte chars
    const bytes = Buffer.from(text);
    const whole = new OutputBuffer(10_000);
    for (let i = 0; i < bytes.length; i += 3) whole.push(bytes.subarray(i, i + 3));
    assert.equal(whole.toString(), text);

    const capped = new OutputBuffer(11); // odd halves force cuts inside characters
    for (let i = 0; i < bytes.length; i += 1) capped.push(bytes.subarray(i, i + 1));
    const s = capped.toString();
    assert.ok(!s.includes("\uFFFD"), s);
    assert.match(s, /^é+\n\[… \d+ bytes of output truncated …\]\n€+$/);
  });

  it("a zero budget keeps nothing but counts", () => {
    const b = new OutputBuffer(0);
    b.push(Buffer.from("abc"));
    assert.equal(b.droppedBytes, 3);
    assert.match(b.toString(), /3 bytes/);
  });
});
