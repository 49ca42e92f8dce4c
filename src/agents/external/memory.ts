/**
 * `memory/query`: the objects of an episode's prebuilt scene graph (a memory folder that
 * `eqa memory build --benchmark` wrote, given to the run with `--memory DIR`), filtered by the
 * words of the query, with the relations between the objects returned.
 */
import type { SceneGraph } from "../memory/index.js";
import { RpcError } from "./rpc.js";
import { describeIssues, memoryQueryParams, type MemoryQueryResult } from "./protocol.js";

/** Why eqa explore refuses memory/query (code -32003): its episodes are explored, not prebuilt. */
export const NO_EXPLORE_MEMORY = "no memory: eqa explore has no prebuilt scene graphs (memory/query answers in eqa answer --memory DIR); an active agent builds its own from its observations";

/** Why a run without a memory folder refuses memory/query (code -32003). */
export const NO_MEMORY = "no memory: the run has no prebuilt scene graphs (give --memory DIR, a folder that eqa memory build --benchmark wrote)";

/** The reply to a memory/query call with `params` about `graph`. */
export function queryMemory(graph: SceneGraph, params: unknown): MemoryQueryResult {
  const parsed = memoryQueryParams.safeParse(params ?? {});
  if (!parsed.success) throw new RpcError(-32602, `invalid params: ${describeIssues(parsed.error)}`);
  const words = (parsed.data.query ?? "").toLowerCase().split(/\s+/).filter((w) => w !== "");
  const matching = graph.instances.filter((i) => {
    const text = `${i.label} ${i.caption}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  // a field left out and a field given as null mean the same
  const chosen = parsed.data.limit != null ? matching.slice(0, parsed.data.limit) : matching;
  const ids = new Set(chosen.map((i) => i.id));
  return {
    episode: graph.episode,
    objects: chosen.map((i) => ({
      id: i.id,
      label: i.label,
      caption: i.caption,
      centre: i.center ? [...i.center] : null,
      size: i.box ? [i.box.max[0] - i.box.min[0], i.box.max[1] - i.box.min[1], i.box.max[2] - i.box.min[2]] : null,
      frames: [...new Set(i.views.map((v) => v.frame))].sort((a, b) => a - b),
    })),
    relations: graph.relations.filter((r) => ids.has(r.subject) && ids.has(r.object)).map((r) => ({ subject: r.subject, relation: r.relation, object: r.object })),
    total: matching.length,
  };
}
