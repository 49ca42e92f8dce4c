import { createHash, timingSafeEqual } from "node:crypto";
import { createReadStream, existsSync, realpathSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { extname, join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { serve, type HttpBindings, type ServerType } from "@hono/node-server";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { UserError, isLoopbackHost, isUserError } from "../core/index.js";
import { openEpisode, resolveEpisodePath, type Episode } from "../episodes/index.js";
import { REPORT_SCRIPT } from "./assets.js";
import { VIEWER_HTML, VIEWER_SCRIPT, VIEWER_STYLE } from "./viewer-assets.js";
import { buildHtmlReport } from "./html.js";
import { pairedDifferences } from "./html-compare.js";
import { scriptHash } from "./html-parts.js";
import { questionView, scoreLabel } from "./question-views.js";
import { KINDS_WITHOUT_SUMMARY, loadRun, runFolders, type LoadedRun, type RunQuestion } from "./runs.js";
import { structuredAnswerText, type TagRunQuestion } from "./tag-runs.js";
import { answerTranscript, appendRating, currentRatings, exploreTranscript, questionsCsv, runInfo, ratingSchema, ratingsExport, runStamp, tagPlanPicture, tagRecordingDir, tagTranscript, withAnswerCalls, RATING_COMMENT_LIMIT, type FrameAddresses } from "./viewer-data.js";

export interface ViewerOptions {
  runDirs: string[];
  /** 127.0.0.1 unless given. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /**
   * The secret every request must carry (`--token`, `EQA_VIEW_TOKEN`): required when `host` is
   * not a loopback address, optional on one. At least 16 characters.
   */
  token?: string;
}

export interface Viewer {
  url: string;
  /** The URL to open in a browser: `url`, with `?token=` when the viewer has a token. */
  openUrl: string;
  close(): Promise<void>;
}

/** Fewest characters a viewer token may have. */
const MIN_TOKEN_LENGTH = 16;

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();

/**
 * The token check: `Authorization: Bearer TOKEN`, or the cookie that a page load with
 * `?token=TOKEN` sets (so the browser's own requests carry it). The cookie holds a hash of
 * the token, never the token, and its name depends on the token, so that viewers with
 * different tokens on one host (cookies ignore ports) do not overwrite each other's.
 */
function tokenGate(token: string) {
  const expected = digest(token);
  const cookieValue = createHash("sha256").update(`eqa view cookie\u0000${token}`).digest("hex");
  const cookieName = `eqa_view_${cookieValue.slice(0, 12)}`;
  const matches = (given: string | undefined): boolean => given !== undefined && timingSafeEqual(digest(given), expected);
  return {
    /** The request's standing: allowed, allowed with a cookie to set (a `?token=` page load), or refused. */
    check(c: Context): "ok" | "set-cookie" | "refused" {
      const authorization = c.req.header("authorization") ?? "";
      const bearer = /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim();
      if (matches(bearer)) return "ok";
      const cookies = (c.req.header("cookie") ?? "").split(";").map((part) => part.trim());
      const cookie = cookies.find((part) => part.startsWith(`${cookieName}=`))?.slice(cookieName.length + 1);
      if (cookie !== undefined && timingSafeEqual(digest(cookie), digest(cookieValue))) return "ok";
      if (matches(c.req.query("token"))) return "set-cookie";
      return "refused";
    },
    cookie: `${cookieName}=${cookieValue}; Path=/; HttpOnly; SameSite=Strict`,
  };
}

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
};

const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp" };

/**
 * Whether a request target tries to leave where it points: `..` segments (also
 * percent-encoded), encoded slashes or backslashes, backslashes, NUL. Checked on the raw
 * target, before any URL normalisation.
 */
export function isSuspiciousTarget(rawTarget: string): boolean {
  const path = rawTarget.split("?")[0] ?? "";
  if (/%2f|%5c|%00|\\|\0/i.test(path)) return true;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return true;
  }
  return decoded.split("/").some((segment) => segment === ".." || segment === ".");
}

/** A file inside `root` (after following symbolic links), or undefined for anything else. */
export function fileInside(root: string, relative: string[]): string | undefined {
  if (relative.some((s) => s === "" || s === "." || s === ".." || s.includes("/") || s.includes("\\") || s.includes("\0"))) return undefined;
  let realRoot: string;
  let real: string;
  try {
    realRoot = realpathSync(root);
    real = realpathSync(resolve(root, ...relative));
  } catch {
    return undefined;
  }
  if (!real.startsWith(realRoot + sep)) return undefined;
  return statSync(real).isFile() ? real : undefined;
}

function pickQuestion(q: RunQuestion): Record<string, unknown> {
  const explored = q.stop !== undefined ? { stop: q.stop, pathLengthM: q.pathLengthM ?? null, ...(q.eac ? { eac: q.eac } : {}), ...(q.error ? { error: q.error } : {}) } : {};
  return { questionId: q.questionId, category: q.category, question: q.question, groundTruth: q.groundTruth, answer: q.answer, score: q.score, ...explored };
}

const round2 = (value: number | null): number | null => (value === null ? null : Math.round(value * 100) / 100);

/** A TAG question as the viewer's lists show any question: its query type as category, its grounded score (1-5). */
function pickTagQuestion(q: TagRunQuestion): Record<string, unknown> {
  const answer = q.prediction === undefined ? (q.predicted ? structuredAnswerText(q.predicted) : undefined) : typeof q.prediction === "string" || q.prediction === null ? q.prediction : structuredAnswerText(q.prediction);
  return { questionId: q.questionId, category: q.tags?.query_type, question: q.question, answer, score: round2(q.score) };
}

function viewerQuestions(run: LoadedRun): Record<string, unknown>[] {
  return run.tag ? run.tag.questions.map(pickTagQuestion) : run.questions.map(pickQuestion);
}

/** What answered a run, as the runs list names it: "vlm (openai/gpt-4o)", "fine-eqa (openai/gpt-4o-mini)". */
function agentOf(run: LoadedRun): string | null {
  const name = (value: unknown): string | undefined => (typeof value === "string" ? value : configName(value) ?? undefined);
  if (run.explore) {
    const config = run.explore.config;
    const explorer = name(config.explorer);
    const answerer = config.answerer;
    const model = name(config.vlm) ?? name(config.model) ?? (typeof answerer === "object" && answerer !== null && "model" in answerer ? name(answerer.model) : undefined);
    return explorer ? (model ? `${explorer} (${model})` : explorer) : null;
  }
  const config = run.answer?.config ?? run.tag?.summary?.config ?? run.settings;
  const agent = name(config?.agent);
  const model = name(config?.model);
  return agent ? (model ? `${agent} (${model})` : agent) : null;
}

/** Each question's ratings, by question id: reviewer, score, comment. */
function ratingsById(dir: string): Record<string, { reviewer: string; score: number; comment: string }[]> {
  const out: Record<string, { reviewer: string; score: number; comment: string }[]> = {};
  for (const r of currentRatings(dir)) (out[r.questionId] ??= []).push({ reviewer: r.reviewer, score: r.score, comment: r.comment });
  return out;
}

/** A TAG question's detail, in the fields the question page shows for any run, plus its structures as text. */
function tagQuestionDetail(q: TagRunQuestion): Record<string, unknown> {
  return {
    ...pickTagQuestion(q),
    // the structure has its own row
    groundTruth: q.answerText || undefined,
    judgeReplies: q.replies,
    error: q.error,
    frames: [],
    calls: [],
    tag: { ...q, truthText: q.truth ? structuredAnswerText(q.truth) : null, predictedText: q.predicted ? structuredAnswerText(q.predicted) : null },
  };
}

function configName(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "name" in value && typeof value.name === "string") return value.name;
  return null;
}

/** The runs a viewer serves: each re-read when its records change (a run in progress, a new rating), never on every request. */
interface ViewerRuns {
  /** The run folders, a folder of runs (eqa demo's) as each of its runs. */
  dirs: string[];
  runs(): Promise<LoadedRun[]>;
  /** The run a request's `:run` names. */
  runAt(c: Context): Promise<LoadedRun | undefined>;
  /** The stamps of the files each run is read from. */
  stamps(): string[];
  /** Episodes opened to serve frames, by path. */
  episodes: Map<string, Promise<Episode>>;
}

function viewerRuns(runDirs: string[]): ViewerRuns {
  // a folder of runs (eqa demo's) is each of its runs
  const folders = runDirs.flatMap((d) => runFolders(d));
  const dirs = folders.map((f) => f.dir);
  const cached = new Map<string, { stamp: string; run: Promise<LoadedRun> }>();
  const stamps = (): string[] => dirs.map((d) => runStamp(d));
  const runs = (): Promise<LoadedRun[]> =>
    Promise.all(
      folders.map(({ dir, label }) => {
        const stamp = runStamp(dir);
        let entry = cached.get(dir);
        if (!entry || entry.stamp !== stamp) {
          entry = { stamp, run: loadRun(dir, label) };
          cached.set(dir, entry);
        }
        return entry.run;
      }),
    );
  const episodes = new Map<string, Promise<Episode>>();
  const runAt = async (c: Context): Promise<LoadedRun | undefined> => {
    const index = Number(c.req.param("run"));
    const all = await runs();
    return Number.isInteger(index) ? all[index] : undefined;
  };
  return { dirs, runs, runAt, stamps, episodes };
}

/** Builds the viewer's app; runs are re-read (at most once a second) so a run in progress shows what it has. */
export function createViewerApp(runDirs: string[], host = "127.0.0.1", token?: string): Hono<{ Bindings: HttpBindings }> {
  const served = viewerRuns(runDirs);
  const app = new Hono<{ Bindings: HttpBindings }>();
  guardRequests(app, host, token);
  addPages(app, served);
  addRunApi(app, served);
  addRatingApi(app, served);
  addFileApi(app, served);
  return app;
}

type ViewerApp = Hono<{ Bindings: HttpBindings }>;

/** Every request: the Host a loopback viewer expects, no path that leaves the run folders, the token where one is set; the security headers on every reply. */
function guardRequests(app: ViewerApp, host: string, token: string | undefined): void {
  // a page elsewhere that rebinds its own name to 127.0.0.1 still sends its own Host: refused.
  // Beyond loopback, the names the viewer is reached by are not known: the token guards it.
  const allowedHosts = new Set(["127.0.0.1", "localhost", "[::1]", host.includes(":") ? `[${host}]` : host]);
  const checkHost = isLoopbackHost(host) || token === undefined;
  const gate = token === undefined ? undefined : tokenGate(token);
  app.use("*", async (c, next) => {
    const raw = c.env?.incoming?.url ?? new URL(c.req.url).pathname;
    const hostHeader = (c.req.header("host") ?? "").toLowerCase().replace(/:\d+$/, "");
    if (checkHost && !allowedHosts.has(hostHeader)) {
      return c.text("refused: unexpected Host header", 403, SECURITY_HEADERS);
    }
    if (isSuspiciousTarget(raw)) {
      return c.text("refused: the path leaves the run directories", 403, SECURITY_HEADERS);
    }
    const standing = gate?.check(c) ?? "ok";
    if (standing === "refused") {
      return c.text("unauthorized: this viewer needs its token: open the URL eqa view printed (it ends in ?token=...), or send Authorization: Bearer TOKEN", 401, { ...SECURITY_HEADERS, "www-authenticate": 'Bearer realm="eqa view"' });
    }
    if (standing === "set-cookie") {
      // the token leaves the address bar (and the history) at once; the cookie carries it on
      const url = new URL(c.req.url);
      url.searchParams.delete("token");
      return c.body(null, 303, { ...SECURITY_HEADERS, location: `${url.pathname}${url.search}`, "set-cookie": gate!.cookie, "cache-control": "no-store" });
    }
    await next();
    // a page with its own policy (the report, pinning its script by hash) keeps it
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) if (k !== "content-security-policy" || !c.res.headers.has(k)) c.res.headers.set(k, v);
  });

}

/** The viewer's page, its script and style, and the report of the runs served. */
function addPages(app: ViewerApp, served: ViewerRuns): void {
  const { runs } = served;
  app.get("/", (c) => c.html(VIEWER_HTML));
  app.get("/viewer.js", (c) => c.body(VIEWER_SCRIPT, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/viewer.css", (c) => c.body(VIEWER_STYLE, 200, { "content-type": "text/css; charset=utf-8" }));
  app.get("/favicon.ico", (c) => c.body(null, 204));
  // the same page as eqa report, of the runs served (without frame thumbnails)
  app.get("/report", async (c) => {
    const { html } = await buildHtmlReport(await runs(), { thumbnails: 0 });
    return c.html(html, 200, { "content-security-policy": `default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src ${scriptHash(REPORT_SCRIPT)}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'` });
  });

}

/** The runs, a run's questions, one question with its transcript, a recording's plan, and the stamp a page polls. */
function addRunApi(app: ViewerApp, served: ViewerRuns): void {
  const { runs, runAt, stamps } = served;
  app.get("/api/runs", async (c) => {
    const all = await runs();
    return c.json({
      runs: all.map((r, index) => {
        const tag = r.tag?.summary;
        return {
          index,
          label: r.label,
          kind: r.kind,
          agent: agentOf(r),
          judge: r.score ? configName(r.score.config.judge) : tag ? configName(tag.config.judge) ?? `no judge (${configName(tag.config.similarity) ?? "?"})` : r.explore?.judged ? r.explore.judged.judge : null,
          questions: viewerQuestions(r).length,
          rated: new Set(currentRatings(r.dir).map((x) => x.questionId)).size,
          // a run writes its summary when it ends: without one it is still going (or was stopped)
          inProgress: !["summary.json", "bench.json"].some((name) => existsSync(join(r.dir, name))) && !KINDS_WITHOUT_SUMMARY.includes(r.kind),
          // LLM-Match in points (0-100); a structured-judge run's grounded score (1-5)
          overall: r.tag ? tag?.scores.grounded.mean ?? null : r.score?.llmMatch.overall.mean ?? r.explore?.judged?.llmMatch.correctness ?? null,
          // the kind's own headline figures (C, C*, E_path…; accuracy and RMSE; …)
          metrics: r.metrics.filter((m) => m.name !== "LLM-Match").slice(0, 6).map((m) => ({ name: m.name, value: m.value, unit: m.unit, about: m.about })),
          ci: r.tag ? tag?.scores.grounded.ci ?? null : r.score?.llmMatch.overall.ci ?? null,
          scale: r.tag ? "1-5" : "0-100",
        };
      }),
    });
  });
  app.get("/api/runs/:run", async (c) => {
    const run = await runAt(c);
    if (!run) return c.json({ error: "no such run" }, 404);
    const questions = viewerQuestions(run);
    const categories = [...new Set(questions.map((q) => q.category).filter((x): x is string => typeof x === "string"))];
    const ratings = ratingsById(run.dir);
    return c.json({ label: run.label, kind: run.kind, scoreLabel: scoreLabel(questionView(run.kind)), notes: run.notes, metrics: run.metrics, info: runInfo(run), categories, questions: questions.map((q) => ({ ...q, ratings: ratings[q.questionId as string] ?? [] })) });
  });
  // the watched files' stamp: the page reloads what it shows when it changes
  app.get("/api/status", (c) => c.json({ stamp: stamps().join(";") }, 200, { "cache-control": "no-store" }));
  // the id in the query (?id=) too: an id with a slash (a memory build's episode, hm3d-v0/scene) cannot be a path segment, since %2F is refused
  app.get("/api/runs/:run/questions/:id?", async (c) => {
    const run = await runAt(c);
    const id = c.req.param("id") ?? c.req.query("id") ?? "";
    const tagQuestion = run?.tag?.questions.find((x) => x.questionId === id);
    const index = Number(c.req.param("run"));
    const ratings = run ? ratingsById(run.dir)[id] ?? [] : [];
    const view = questionView(run?.kind ?? "unknown");
    const label = scoreLabel(view);
    if (run && tagQuestion) {
      const recording = await tagTranscript(index, run.tag?.questionsPath, id);
      // the frames the answering agent was sent, served from the recording it answered from
      const used = tagQuestion.transcript;
      const frames: FrameAddresses = {
        of(frame) {
          if (run.framesRoot === undefined || !used?.episode || !used.frames.includes(frame)) return undefined;
          const base = `/api/runs/${index}/frames/${encodeURIComponent(id)}/${frame}`;
          return { thumb: `${base}?size=thumb`, full: `${base}?size=full` };
        },
      };
      const transcript = run.tracesDir && view.transcript !== null && view.transcript !== "exploration" ? withAnswerCalls(recording, answerTranscript(run.tracesDir, id, frames, view.transcript)) : recording;
      return c.json({ ...tagQuestionDetail(tagQuestion), scoreLabel: label, runLabel: run.label, ratings, transcript });
    }
    const q = run?.questions.find((x) => x.questionId === id);
    if (!run || !q) return c.json({ error: "no such question" }, 404);
    const usable = view.frames !== null && run.framesRoot !== undefined && q.episode !== undefined;
    if (view.transcript === "exploration") return c.json({ ...q, scoreLabel: label, runLabel: run.label, ratings, framesServed: usable, transcript: exploreTranscript(index, run.dir, id) });
    const frames: FrameAddresses = {
      of(frame) {
        if (!usable || !q.frames.includes(frame)) return undefined;
        const base = `/api/runs/${index}/frames/${encodeURIComponent(id)}/${frame}`;
        return { thumb: `${base}?size=thumb`, full: `${base}?size=full` };
      },
    };
    const answers = view.transcript === null ? undefined : answerTranscript(run.tracesDir ?? run.dir, id, frames, view.transcript, q.trajectory);
    // a TAG-EQA question answered (not yet scored): the recording it was made from, with the agent's calls
    const recording = view.plan === "recording" ? await tagTranscript(index, run.tagSet, id) : null;
    const transcript = answers ? withAnswerCalls(recording, answers) : recording;
    return c.json({ ...q, scoreLabel: label, runLabel: run.label, ratings, framesServed: usable, transcript });
  });
  // a TAG question's recording: its plan with the agent's path (never a file named by the request)
  app.get("/api/runs/:run/plans/:id", async (c) => {
    const run = await runAt(c);
    const id = c.req.param("id");
    const dir = run?.tag?.questions.some((q) => q.questionId === id) ? await tagRecordingDir(run.tag.questionsPath, id) : run?.questions.some((q) => q.questionId === id) ? await tagRecordingDir(run.tagSet, id) : undefined;
    if (!dir) return c.text("no plan for this question", 404);
    try {
      return c.body(new Uint8Array(await tagPlanPicture(dir)), 200, { "content-type": "image/png", "cache-control": "max-age=3600" });
    } catch {
      return c.text("the recording's plan could not be read", 500);
    }
  });
}

/** A reviewer's ratings: appended, and exported as CSV or as what eqa judge-agreement reads. */
function addRatingApi(app: ViewerApp, served: ViewerRuns): void {
  const { runAt } = served;
  // a reviewer's mark (1-5) and comment on an answer, appended to the run's ratings.jsonl
  app.post("/api/runs/:run/ratings", bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.json({ error: "the rating is larger than 16 KB" }, 413) }), async (c) => {
    // a page elsewhere can send a form to 127.0.0.1, never this header with a JSON body of its own origin
    const origin = c.req.header("origin");
    const ownHost = c.req.header("host") ?? "";
    if (c.req.header("x-eqa-view") !== "rate" || !/^application\/json\b/.test(c.req.header("content-type") ?? "") || (origin !== undefined && origin !== `http://${ownHost}` && origin !== `https://${ownHost}`) || (c.req.header("sec-fetch-site") ?? "same-origin") !== "same-origin") {
      return c.json({ error: "refused: ratings are sent by the viewer's own page" }, 403);
    }
    const run = await runAt(c);
    if (!run) return c.json({ error: "no such run" }, 404);
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: "the rating is not JSON" }, 400);
    }
    const parsed = ratingSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return c.json({ error: `${issue?.path.join(".") || "rating"}: ${issue?.message ?? "invalid"} (score 1-5, comment up to ${RATING_COMMENT_LIMIT} characters, reviewer 1-64 characters)` }, 400);
    }
    if (!viewerQuestions(run).some((q) => q.questionId === parsed.data.questionId)) return c.json({ error: "no such question in this run" }, 404);
    try {
      const stored = appendRating(run.dir, parsed.data);
      return c.json({ rating: stored, ratings: ratingsById(run.dir)[parsed.data.questionId] ?? [] });
    } catch (error) {
      if (isUserError(error)) return c.json({ error: error.message }, 507);
      throw error;
    }
  });
  app.get("/api/runs/:run/questions.csv", async (c) => {
    const run = await runAt(c);
    if (!run) return c.text("no such run", 404);
    const name = `${run.label.replace(/[^A-Za-z0-9._-]/g, "_")}-questions.csv`;
    return c.body(questionsCsv(viewerQuestions(run), ratingsById(run.dir)), 200, { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" });
  });
  // what eqa judge-agreement reads: [{question_id, score, annotator}]
  app.get("/api/runs/:run/ratings/export.json", async (c) => {
    const run = await runAt(c);
    if (!run) return c.json({ error: "no such run" }, 404);
    const name = `${run.label.replace(/[^A-Za-z0-9._-]/g, "_")}-ratings.json`;
    return c.body(`${JSON.stringify(ratingsExport(run.dir), null, 1)}\n`, 200, { "content-type": "application/json; charset=utf-8", "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" });
  });
}

/** Frames the agents used, two runs compared, and a run's own files as data. */
function addFileApi(app: ViewerApp, served: ViewerRuns): void {
  const { runs, runAt, dirs, episodes } = served;
  app.get("/api/runs/:run/frames/:id/:index", async (c) => {
    const run = await runAt(c);
    // a question's frames: an answer run's, or those a TAG run's answering agent was sent (`answers/`)
    const tagged = run?.tag?.questions.find((x) => x.questionId === c.req.param("id"))?.transcript;
    const q = run?.questions.find((x) => x.questionId === c.req.param("id")) ?? (tagged?.episode ? { episode: tagged.episode, frames: tagged.frames } : undefined);
    const index = Number(c.req.param("index"));
    // only frames the agent used, of the episode the run names
    if (!run?.framesRoot || !q?.episode || !q.frames.includes(index)) return c.text("no such frame", 404);
    let path: string | undefined;
    try {
      // the viewer serves nothing outside the folders it was given: not even through a link in the frames folder
      path = resolveEpisodePath(run.framesRoot, q.episode, { field: "episode_history" }, { followLinks: false });
    } catch (error) {
      if (isUserError(error)) return c.text("refused: the episode's path leaves the frames folder", 403);
      throw error;
    }
    if (!path) return c.text("the episode's frames are not there any more", 404);
    let episode = episodes.get(path);
    if (!episode) {
      episode = openEpisode(path, q.episode);
      episodes.set(path, episode);
      episode.catch(() => episodes.delete(path));
    }
    try {
      const opened = await episode;
      const full = c.req.query("size") === "full";
      const [image] = await opened.images([index], full ? { maxSide: 8192, format: "png" } : { maxSide: 240, format: "jpeg", quality: 75 });
      return c.body(new Uint8Array(image!.data), 200, { "content-type": image!.mediaType, "cache-control": "max-age=3600" });
    } catch {
      return c.text("the frame could not be read", 500);
    }
  });
  app.get("/api/compare", async (c) => {
    const all = await runs();
    const a = all[Number(c.req.query("a"))];
    const b = all[Number(c.req.query("b"))];
    if (!a || !b) return c.json({ error: "no such run" }, 404);
    const byA = new Map(viewerQuestions(a).map((q) => [q.questionId as string, q]));
    const byB = new Map(viewerQuestions(b).map((q) => [q.questionId as string, q]));
    const ids = [...new Set([...byA.keys(), ...byB.keys()])];
    const rows = ids.map((id) => {
      const qa = byA.get(id);
      const qb = byB.get(id);
      return { questionId: id, question: qa?.question ?? qb?.question, a: qa ?? null, b: qb ?? null };
    });
    const both = rows.filter((r) => typeof r.a?.score === "number" && typeof r.b?.score === "number");
    const better = both.filter((r) => (r.a!.score as number) > (r.b!.score as number)).length;
    const worse = both.filter((r) => (r.a!.score as number) < (r.b!.score as number)).length;
    // per category, the second run against the first on the questions both scored (LLM-Match points, paired bootstrap)
    const deltas = pairedDifferences(a, b).map((d) => ({ group: d.group, n: d.n, a: d.base, b: d.other, difference: d.difference.mean, ci: d.difference.ci, higher: d.higher, lower: d.lower, significant: d.significant }));
    return c.json({ a: a.label, b: b.label, rows, deltas, summary: `${both.length} questions scored in both: ${a.label} higher on ${better}, lower on ${worse}, equal on ${both.length - better - worse}` });
  });
  // the run's own files, as data: never rendered as HTML
  app.get("/runs/:run/files/*", async (c) => {
    const index = Number(c.req.param("run"));
    const dir = Number.isInteger(index) ? dirs[index] : undefined;
    const prefix = `/runs/${c.req.param("run")}/files/`;
    const rest = new URL(c.req.url).pathname.slice(prefix.length);
    if (!dir) return c.text("no such run", 404);
    let segments: string[];
    try {
      segments = rest.split("/").map((s) => decodeURIComponent(s));
    } catch {
      return c.text("refused", 403);
    }
    const file = fileInside(dir, segments);
    if (!file) return c.text("refused: not a file inside the run directory", 403);
    const type = IMAGE_TYPES[extname(file).toLowerCase()] ?? (extname(file) === ".json" ? "application/json; charset=utf-8" : "text/plain; charset=utf-8");
    const stream = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
    return c.body(stream, 200, { "content-type": type, "content-disposition": "inline" });
  });
}

/** `eqa view`: serves the viewer on 127.0.0.1 (unless another host is given). */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token;
  if (token === undefined && !isLoopbackHost(host)) {
    throw new UserError(`binding ${host} serves the runs beyond this machine, and no token guards them`, { field: "--host" }, `pass --token SECRET (or set EQA_VIEW_TOKEN), at least ${MIN_TOKEN_LENGTH} characters, e.g. --token "$(openssl rand -hex 16)"; or keep --host 127.0.0.1 and reach it through an SSH tunnel`);
  }
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
    throw new UserError(`the token has ${token.length} characters, fewer than ${MIN_TOKEN_LENGTH}`, { field: "--token" }, `choose a longer secret, e.g. --token "$(openssl rand -hex 16)"`);
  }
  // a bad path or an unreadable file is a UserError now, not a 500 later
  for (const dir of options.runDirs) for (const run of runFolders(dir)) await loadRun(run.dir, run.label);
  const app = createViewerApp(options.runDirs, host, token);
  const server: ServerType = await new Promise((resolveServer, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host }, () => resolveServer(s));
    s.once("error", (error: NodeJS.ErrnoException) => {
      reject(error.code === "EADDRINUSE" ? new UserError(`port ${options.port} is in use`, { field: "--port" }, "choose another port, or 0 for any free one") : error);
    });
  });
  const address = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shown}:${address.port}`;
  return {
    url,
    openUrl: token === undefined ? `${url}/` : `${url}/?token=${encodeURIComponent(token)}`,
    close: () =>
      new Promise<void>((done) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

