import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import sharp from "sharp";
import { UserError } from "../../src/core/index.js";
import { prepareImage } from "../../src/episodes/index.js";
import { temporaryDir } from "../helpers/paths.js";
import { writeRgb } from "./fixtures.js";

const dir = temporaryDir("eqakit-image-");
const scannetSize = join(dir, "scannet-size.png");
const small = join(dir, "small.png");

before(async () => {
  await writeRgb(scannetSize, 1296, 968, 3);
  await writeRgb(small, 300, 200, 4);
});

describe("prepareImage", () => {
  it("resizes the longest side to 512 by default, as PNG, with the sha256 of the bytes", async () => {
    const image = await prepareImage(scannetSize);
    assert.equal(image.mediaType, "image/png");
    assert.deepEqual([image.width, image.height], [512, 382]);
    assert.equal(image.sha256, createHash("sha256").update(image.data).digest("hex"));
    const meta = await sharp(image.data).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ["png", 512, 382]);
  });

  it("accepts encoded bytes and gives the same image, byte for byte", async () => {
    const fromFile = await prepareImage(scannetSize);
    const fromBytes = await prepareImage(readFileSync(scannetSize));
    assert.equal(fromBytes.sha256, fromFile.sha256);
  });

  it("a portrait image keeps its height as the longest side", async () => {
    const portrait = await sharp(scannetSize).rotate(90).png().toBuffer();
    const image = await prepareImage(portrait, { maxSide: 256 });
    assert.deepEqual([image.width, image.height], [191, 256]);
  });

  it("never enlarges", async () => {
    const image = await prepareImage(small, { maxSide: 512 });
    assert.deepEqual([image.width, image.height], [300, 200]);
  });

  it("encodes JPEG at the quality asked", async () => {
    const high = await prepareImage(scannetSize, { format: "jpeg" });
    const low = await prepareImage(scannetSize, { format: "jpeg", quality: 30 });
    assert.equal(high.mediaType, "image/jpeg");
    assert.deepEqual([...high.data.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    assert.ok(low.data.length < high.data.length, `${low.data.length} < ${high.data.length}`);
    assert.notEqual(low.sha256, high.sha256);
  });

  it("refuses bad options with a UserError", async () => {
    await assert.rejects(prepareImage(small, { maxSide: 0 }), UserError);
    await assert.rejects(prepareImage(small, { quality: 101 }), UserError);
  });

  it("names the file it cannot read", async () => {
    const bad = join(dir, "bad.png");
    writeFileSync(bad, "no image here");
    await assert.rejects(prepareImage(bad), (error: unknown) => error instanceof UserError && error.message.startsWith(`${bad}: cannot read the image`));
    const missing = join(dir, "missing.png");
    await assert.rejects(prepareImage(missing), (error: unknown) => error instanceof UserError && error.message.startsWith(`${missing}: image file not found`));
  });
});
