import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UserError, pathInside, resolveInside } from "../../src/core/index.js";
import { temporaryDir } from "../helpers/paths.js";

/** root/ with inside/ep/, a link inside/same -> ep (stays), a link out -> ../outside (leaves), and outside/ beside root. */
function layout(): { root: string; outside: string } {
  const dir = temporaryDir();
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  mkdirSync(join(root, "inside", "ep"), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "secret.png"), "not a frame");
  symlinkSync("ep", join(root, "inside", "same"));
  symlinkSync(outside, join(root, "out"));
  return { root, outside };
}

describe("pathInside", () => {
  test("a relative path under the root resolves to root/path, existing or not, and `..` that stays inside is allowed", () => {
    const { root } = layout();
    assert.deepEqual(pathInside(root, "inside/ep"), { path: join(root, "inside", "ep") });
    assert.deepEqual(pathInside(root, "inside/missing/deeper"), { path: join(root, "inside", "missing", "deeper") });
    assert.deepEqual(pathInside(root, "inside/ep/../ep"), { path: join(root, "inside", "ep") });
    assert.deepEqual(pathInside(root, "inside/same"), { path: join(root, "inside", "same") }, "a link that stays inside is followed");
  });

  test("an absolute path is refused, a POSIX or a Windows one", () => {
    const { root } = layout();
    assert.deepEqual(pathInside(root, "/etc/passwd"), { refused: "is an absolute path" });
    assert.deepEqual(pathInside(root, "C:\\Windows\\win.ini"), { refused: "is an absolute path" });
  });

  test("`..` that climbs out of the root is refused, even towards a file that does not exist", () => {
    const { root } = layout();
    const refused = pathInside(root, "inside/../../outside/secret.png");
    assert.ok("refused" in refused);
    assert.match(refused.refused, /^climbs out of .*root with "\.\."$/);
    assert.ok("refused" in pathInside(root, "../nowhere"));
  });

  test("a symbolic link that leads out of the root is refused, as is any path through it", () => {
    const { root, outside } = layout();
    for (const path of ["out", "out/secret.png", "out/missing.png"]) {
      const refused = pathInside(root, path);
      assert.ok("refused" in refused, path);
      assert.match(refused.refused, /^leads through a symbolic link to .*outside(\/secret\.png)?, outside .*root$/, path);
      assert.ok(refused.refused.includes(outside), path);
    }
  });

  test("with followLinks (a folder of the user's own), a link that leads out is followed, and the path as written must still stay inside", () => {
    const { root } = layout();
    assert.deepEqual(pathInside(root, "out/secret.png", { followLinks: true }), { path: join(root, "out", "secret.png") });
    assert.ok("refused" in pathInside(root, "out/../../outside/secret.png", { followLinks: true }));
    assert.deepEqual(pathInside(root, "/etc/passwd", { followLinks: true }), { refused: "is an absolute path" });
  });

  test("a NUL byte is refused", () => {
    const { root } = layout();
    assert.deepEqual(pathInside(root, "inside/ep\0.png"), { refused: "holds a NUL byte" });
  });
});

describe("resolveInside", () => {
  test("a refused path is a UserError naming the record and field it came from", () => {
    const { root } = layout();
    assert.equal(resolveInside(root, "inside/ep", { id: "q1", field: "episode_history" }), join(root, "inside", "ep"));
    assert.throws(
      () => resolveInside(root, "../outside", { file: "questions.json", id: "q1", field: "episode_history" }),
      (error: unknown) => error instanceof UserError && /^questions\.json, id q1, field "episode_history": path "\.\.\/outside" climbs out of /.test(error.message),
    );
  });
});
