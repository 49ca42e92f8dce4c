import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

/** A tar archive (ustar, as GNU tar writes it) of folders and files, with a GNU long-name record for paths over 100 bytes. */
function tar(entries: [string, Buffer | null][]): Buffer {
  const blocks: Buffer[] = [];
  const header = (name: string, size: number, type: string): Buffer => {
    const h = Buffer.alloc(512);
    h.write(name.slice(0, 100), 0);
    h.write("0000644\0", 100);
    h.write("0000000\0", 108);
    h.write("0000000\0", 116);
    h.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
    h.write(`${(1700000000).toString(8).padStart(11, "0")}\0`, 136);
    h.write("        ", 148);
    h.write(type, 156);
    h.write("ustar  \0", 257);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    return h;
  };
  const pad = (data: Buffer): Buffer => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
  for (const [name, data] of entries) {
    if (Buffer.byteLength(name) > 100) {
      const long = Buffer.from(`${name}\0`);
      blocks.push(header("././@LongLink", long.length, "L"), pad(long));
    }
    blocks.push(header(name, data?.length ?? 0, data === null ? "5" : "0"));
    if (data) blocks.push(pad(data));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

test("eqa data prepare openeqa --archive checks OpenEQA's sum, refuses a wrong one, and unpacks into OpenEQA's layout, resumably", async () => {
  const home = temporaryDir();
  const episode = "hm3d-v0/000-hm3d-BFRyYbPCCPE";
  const long = `hm3d-v0/001-hm3d-${"x".repeat(90)}/00000-rgb.png`;
  const entries: [string, Buffer | null][] = [
    ["hm3d-v0/", null],
    [`${episode}/`, null],
    [`${episode}/00000-rgb.png`, Buffer.from("first frame")],
    [`${episode}/00001-rgb.png`, Buffer.alloc(70_000, 7)],
    [`${episode}/empty.txt`, Buffer.alloc(0)],
    [long, Buffer.from("long name")],
  ];
  const dir = join(home, "downloads");
  mkdirSync(dir);
  const archive = join(dir, "open-eqa-hm3d-frames-v0.tgz");
  writeFileSync(archive, tar(entries));
  const out = join(home, "frames");

  // the real archive's md5 is OpenEQA's; this stand-in is checked by its own sha256 through the test variable
  const refused = await runCli(["data", "prepare", "openeqa", "--archive", archive, "--out", out], cliEnv(home));
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /open-eqa-hm3d-frames-v0\.tgz: has md5 [0-9a-f]{32}, expected 286aa5d2fda99f4ed1567ae212998370/);
  assert.equal(existsSync(join(out, episode)), false, "nothing unpacked on a wrong sum");

  const sha = createHash("sha256").update(readFileSync(archive)).digest("hex");
  const env = cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: JSON.stringify({ "open-eqa-hm3d-frames-v0.tgz": sha }) });
  const unpacked = await runCli(["data", "prepare", "openeqa", "--archive", archive, "--out", out], env);
  assert.equal(unpacked.code, 0, unpacked.stderr);
  assert.match(unpacked.stdout, new RegExp(`sha256 ${sha} ok\\): 4 files unpacked .*, 0 kept from before`));
  for (const [name, data] of entries) if (data) assert.ok(readFileSync(join(out, name)).equals(data), name);

  // a run stopped midway left one file whole and a temporary beside it: the rerun keeps the first, removes the other
  writeFileSync(join(out, episode, `00001-rgb.png.99999.tmp`), "partial");
  writeFileSync(join(out, episode, "00001-rgb.png"), "cut short");
  const resumed = await runCli(["data", "prepare", "openeqa", "--archive", archive, "--out", out], env);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, /\(checked before\): 1 files unpacked .*, 3 kept from before/);
  assert.ok(readFileSync(join(out, episode, "00001-rgb.png")).equals(entries[3]![1]!));
  assert.equal(existsSync(join(out, episode, `00001-rgb.png.99999.tmp`)), false);

  const other = join(dir, "frames.tgz");
  writeFileSync(other, readFileSync(archive));
  const unknown = await runCli(["data", "prepare", "openeqa", "--archive", other, "--out", out], env);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /frames\.tgz: not one of OpenEQA's archives/);

  const states = join(dir, "open-eqa-hm3d-states-v0.tgz");
  writeFileSync(states, readFileSync(archive).subarray(0, 200));
  const cut = await runCli(["data", "prepare", "openeqa", "--archive", states, "--out", join(home, "states")], cliEnv(home, { EQAKIT_TEST_FETCH_SHA256: JSON.stringify({ "open-eqa-hm3d-states-v0.tgz": createHash("sha256").update(readFileSync(states)).digest("hex") }) }));
  assert.equal(cut.code, 2);
  assert.match(cut.stderr, /open-eqa-hm3d-states-v0\.tgz: (ends inside a file|cannot be unpacked)/);
});
