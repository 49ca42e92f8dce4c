/**
 * TAG-EQA's baselines (seed 002, section 4, Table 2) by name, and what they share: the
 * observations, action descriptions and object positions they read (`observations.ts`), and the
 * resumable run that answers a set with one (`run.ts`).
 */
import { UserError } from "../../core/index.js";
import { socraticIc } from "./socratic-ic.js";
import { socraticIcOr } from "./socratic-ic-or.js";
import { conceptGraphsBaseline } from "./conceptgraphs.js";
import { llmApiBaseline } from "./llm-api.js";
import { TAG_BASELINE_NAMES, type TagBaseline, type TagBaselineName } from "./types.js";

export * from "./types.js";
export * from "./observations.js";
export { socraticHistory, TAG_ANSWER_PARAMS, TAG_CAPTION_PARAMS, TAG_CAPTION_PROMPT, TAG_OBJECT_CAPTION_PROMPT, TAG_SOCRATIC_ANSWER_PROMPT, type SocraticPrepared } from "./socratic.js";
export * from "./run.js";
export { buildTagConceptGraph, captionedViews, conceptGraphsBaseline, renderGraphHistory, renderGraphObjects, renderGraphRelations, tagConceptGraphSchema, CAPTIONED_VIEWS, CONCEPTGRAPHS_ANSWER_PROMPT, CONCEPTGRAPHS_SUMMARY_PROMPT, type TagConceptGraph, type TagGraphObject, type TagGraphStep } from "./conceptgraphs.js";
export { apiObservations, llmApiBaseline, parseRetrievalCalls, renderApiObservations, retrievalCallsSchema, runRetrievalCalls, API_ANSWER_PROMPT, API_POSITION_THRESHOLD, API_RETRIEVE_PROMPT, API_SEMANTIC_THRESHOLD, RETRIEVAL_LIMITS, type ApiObservation, type ParsedRetrieval, type RetrievalCall, type RetrievalResult } from "./llm-api.js";

/** The baselines eqakit has, by name (Table 2's order); a name missing here is not available yet. */
export const TAG_BASELINES: { readonly [N in TagBaselineName]?: TagBaseline<unknown> } = {
  "socratic-ic": socraticIc,
  "socratic-ic-or": socraticIcOr,
  conceptgraphs: conceptGraphsBaseline,
  "llm-api": llmApiBaseline,
};

/** The names of the baselines eqakit has, in Table 2's order. */
export function availableTagBaselines(): TagBaselineName[] {
  return TAG_BASELINE_NAMES.filter((name) => TAG_BASELINES[name] !== undefined);
}

/** The baseline of that name; a `UserError` for one eqakit does not have yet. */
export function tagBaseline(name: TagBaselineName): TagBaseline<unknown> {
  const baseline = TAG_BASELINES[name];
  if (!baseline) throw new UserError(`the ${name} baseline is not available yet`, { field: "--agent" }, `available: ${availableTagBaselines().join(", ")}`);
  return baseline;
}
