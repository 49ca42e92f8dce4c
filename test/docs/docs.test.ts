import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/program.js";
import { projectRoot } from "../helpers/paths.js";

/**
 * The README and every page under docs/ are checked against the repository and the `eqa`
 * command as they are: links and anchors resolve, every `eqa …` command written in them names
 * subcommands and flags that exist, the repository paths they name exist, and none of them
 * points outside the clone.
 */

interface Doc {
  path: string;
  text: string;
  /** The text with fenced code blocks blanked out (line numbers kept). */
  prose: string;
  /** Fenced code blocks: info string, first line number, body. */
  blocks: { lang: string; line: number; body: string }[];
}

function readDoc(path: string): Doc {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  const blocks: Doc["blocks"] = [];
  const prose: string[] = [];
  let open: { fence: string; lang: string; line: number; body: string[] } | undefined;
  lines.forEach((line, i) => {
    const fence = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (open) {
      if (fence && fence[1]!.startsWith(open.fence) && line.trim() === fence[1]) {
        blocks.push({ lang: open.lang, line: open.line, body: open.body.join("\n") });
        open = undefined;
      } else open.body.push(line);
      prose.push("");
    } else if (fence) {
      open = { fence: fence[1]!, lang: fence[2] ?? "", line: i + 1, body: [] };
      prose.push("");
    } else prose.push(line);
  });
  assert.equal(open, undefined, `${path}: a code block opened at line ${open?.line} is never closed`);
  return { path, text, prose: prose.join("\n"), blocks };
}

const docPaths = [join(projectRoot, "README.md"), ...readdirSync(join(projectRoot, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => join(projectRoot, "docs", f))];
const docs = docPaths.map(readDoc);
const where = (doc: Doc, index: number): string => `${relative(projectRoot, doc.path)}:${doc.prose.slice(0, index).split("\n").length}`;

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(doc: Doc): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of doc.prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "");
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "").replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** Inline code spans of the prose, with where they are. */
function codeSpans(doc: Doc): { code: string; index: number }[] {
  return [...doc.prose.matchAll(/(`+)([^`]+?)\1/g)].map((m) => ({ code: m[2]!.trim(), index: m.index }));
}

describe("README.md and docs/", () => {
  test("the pages exist: the front page and one page per area", () => {
    for (const page of ["scoring", "agents", "memory", "active-eqa", "tag-eqa", "reward-models", "reports", "configuration"]) {
      assert.ok(existsSync(join(projectRoot, "docs", `${page}.md`)), `docs/${page}.md is missing`);
    }
  });

  test("every relative link and anchor resolves to a file and a heading", () => {
    const problems: string[] = [];
    const anchorsOf = new Map(docs.map((d) => [resolve(d.path), anchors(d)]));
    for (const doc of docs) {
      // inline code is not a link
      const prose = doc.prose.replace(/(`+)[^`]+?\1/g, (span) => " ".repeat(span.length));
      for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split("#", 2) as [string, string | undefined];
        const path = file === "" ? resolve(doc.path) : resolve(dirname(doc.path), decodeURIComponent(file));
        if (!existsSync(path)) {
          problems.push(`${where(doc, match.index)}: ${target}: no file ${relative(projectRoot, path)}`);
          continue;
        }
        if (anchor === undefined) continue;
        const headings = anchorsOf.get(path) ?? (path.endsWith(".md") && statSync(path).isFile() ? anchors(readDoc(path)) : undefined);
        if (!headings) problems.push(`${where(doc, match.index)}: ${target}: an anchor into a file that is not markdown`);
        else if (!headings.has(anchor)) problems.push(`${where(doc, match.index)}: ${target}: no heading #${anchor} in ${relative(projectRoot, path)}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test("every `eqa …` command names subcommands and flags that exist", () => {
    const program = buildProgram();
    const problems: string[] = [];
    let checked = 0;
    const check = (command: string, place: string): void => {
      // quoted text is a value (e.g. --env-command "node … --seed {scene}"), not flags of eqa
      const words = command.replace(/"[^"]*"|'[^']*'/g, "VALUE").split(/\s+/).filter((w) => w !== "");
      let at = words.indexOf("eqa");
      if (at < 0) return;
      let current: Command = program;
      const names = ["eqa"];
      for (at += 1; at < words.length; at++) {
        const word = words[at]!;
        if (current.commands.length === 0 || word.startsWith("-") || /^[[<…]/.test(word)) break;
        const next = current.commands.find((c) => c.name() === word || c.aliases().includes(word));
        if (!next) {
          if (word !== "help") problems.push(`${place}: \`${command}\`: ${names.join(" ")} has no subcommand ${word}`);
          return;
        }
        current = next;
        names.push(word);
      }
      const known = new Set([...current.options.flatMap((o) => [o.long, o.short]), "--help", "-h", ...(current === program ? ["--version", "-V"] : [])]);
      for (const flag of words.slice(at).join(" ").matchAll(/(?<![\w-])(--?[a-zA-Z][\w-]*)/g)) {
        if (!known.has(flag[1]!)) problems.push(`${place}: \`${command}\`: ${names.join(" ")} has no flag ${flag[1]}`);
      }
      checked += 1;
    };
    for (const doc of docs) {
      for (const block of doc.blocks) {
        if (!["sh", "bash", "shell", "console"].includes(block.lang)) continue;
        const lines = block.body.replace(/\\\n/g, " ").split("\n");
        lines.forEach((line, i) => {
          const code = line.replace(/^\s*\$\s+/, "").replace(/\s#.*$/, "");
          // a line may chain commands; each part that runs eqa is checked
          for (const part of code.split(/&&|\|\||;|\|(?![^[]*\])/)) {
            if (/^\s*(npx\s+)?eqa(\s|$)/.test(part)) check(part.trim(), `${relative(projectRoot, doc.path)}:${block.line + 1 + i}`);
          }
        });
      }
      for (const span of codeSpans(doc)) {
        if (/^(npx\s+)?eqa\s/.test(span.code)) check(span.code, where(doc, span.index));
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked > 50, `only ${checked} commands were found in the documents`);
  });

  test("every repository path a document names exists", () => {
    const problems: string[] = [];
    for (const doc of docs) {
      for (const span of codeSpans(doc)) {
        const path = span.code.replace(/[.,:;]$/, "");
        if (!/^(src|prompts|bridges|examples|scripts|bench|test|clients|docs)\/[\w./-]*$/.test(path)) continue;
        if (path.startsWith("bench/out/")) continue; // written by npm run bench
        if (!existsSync(join(projectRoot, path))) problems.push(`${where(doc, span.index)}: ${path} does not exist`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test("no document points outside the clone (../shared)", () => {
    for (const doc of docs) assert.ok(!doc.text.includes("../shared"), `${relative(projectRoot, doc.path)} refers to ../shared`);
  });
});
