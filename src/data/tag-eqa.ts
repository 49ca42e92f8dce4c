/**
 * TAG-EQA datasets (seed `002_…`): questions generated as programs over a trajectory log, with
 * structured answers grouped by the predicate values that resolve their ambiguity (Fig. 2).
 *
 * A structured answer is a list of groups. A question without ambiguity has one group whose
 * `predicate` is the empty string. Each group lists the objects that satisfy it (type, caption,
 * position in the grounding frame when known) and the answer's value for that group (a count,
 * a state, a property, a location, or the list of objects itself).
 *
 * The grounding frame: the agent at the origin at its first observation, looking along −z,
 * y up (eqakit's conventions), metres.
 *
 * A dataset (`questions.json`) is a JSON array of `TagQuestion` records.
 */
import { z } from "zod";
import { readJsonFile } from "./json.js";
import { requireRecords, validateRecords } from "./validate.js";

const vec3 = z.tuple([z.number(), z.number(), z.number()]);

export const structuredObjectSchema = z.object({
  type: z.string(),
  caption: z.string().nullable().optional(),
  position: vec3.nullable().optional(),
});

const answerValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]);

export const answerGroupSchema = z.object({
  /** The predicate values that define the group, as text (e.g. "location: on the countertop (x=0.46, y=0.15, z=-0.83)"); "" when the answer is not grouped. */
  predicate: z.string(),
  /** The same as key = value pairs, with the position of a referenced object when known. */
  conditions: z.array(z.object({ key: z.string(), value: z.string(), position: vec3.nullable().optional() })).optional(),
  objects: z.array(structuredObjectSchema),
  value: answerValue,
});

export const structuredAnswerSchema = z.array(answerGroupSchema);

export type StructuredObject = z.infer<typeof structuredObjectSchema>;
export type AnswerGroup = z.infer<typeof answerGroupSchema>;
export type StructuredAnswer = z.infer<typeof structuredAnswerSchema>;

export const TAG_QUERY_TYPES = ["listObjects", "countObjects", "countTimes", "getState", "getProperty", "getLocation"] as const;
export type TagQueryType = (typeof TAG_QUERY_TYPES)[number];
export const TAG_PREDICATE_TYPES = ["property", "location", "state", "position", "moment"] as const;
export type TagPredicateType = (typeof TAG_PREDICATE_TYPES)[number];
export const TAG_SPLITS = ["train", "validation", "test"] as const;
export type TagSplit = (typeof TAG_SPLITS)[number];

const conditionSchema = z.object({
  type: z.enum(TAG_PREDICATE_TYPES),
  /** e.g. "colour", "on", "inside", "same_on", "above", "open", "in_front_of", "before", "between". */
  key: z.string(),
  /** The predicate's arguments: object types, event (type, object type, ordinal), property values; never log-internal ids (src/generate/program.ts). */
  args: z.array(z.union([z.string(), z.number()])),
  /** Grounded programs: the position, in the grounding frame, of the object the condition refers to. */
  at: vec3.optional(),
});

export const tagProgramSchema = z.object({
  /** DATA → FILTER₁ → … → FILTERₙ → QUERY. */
  target: z.string().describe("the object type the question is about"),
  filters: z.array(conditionSchema),
  query: z.object({ type: z.enum(TAG_QUERY_TYPES), modifier: z.string().nullable() }),
});

export const tagSeenObjectSchema = z.object({
  /** The trajectory log's id of the object. */
  object: z.string(),
  type: z.string(),
  /** Its position in the grounding frame as the answer gives it, when known. */
  position: vec3.nullable(),
  /** The step the question refers to the object at (the step its value was read, the end of a moment's window…). */
  step: z.number().int().nonnegative(),
  /** The steps at which the agent saw it as it was at `step` (never empty). */
  steps: z.array(z.number().int().nonnegative()),
  /** The frames of those steps, when the recording has frames. */
  frames: z.array(z.number().int().nonnegative()).optional(),
});

export const tagQuestionSchema = z.object({
  question_id: z.string().min(1),
  /** The trajectory log's id and the scene it was recorded in. */
  trajectory: z.string(),
  environment: z.string(),
  source: z.string(),
  question: z.string(),
  /** The natural-language answer. */
  answer: z.string(),
  structured_question: z.string(),
  program: tagProgramSchema,
  structured_answer: structuredAnswerSchema,
  /** The same question with its ambiguous objects named by coordinates (absent when not ambiguous). */
  grounded: z
    .object({ question: z.string(), structured_question: z.string(), answer: z.string(), structured_answer: structuredAnswerSchema })
    .nullable(),
  tags: z.object({
    predicate_types: z.array(z.enum(TAG_PREDICATE_TYPES)),
    query_type: z.enum(TAG_QUERY_TYPES),
    conditions: z.number().int().nonnegative(),
    ambiguous: z.boolean(),
  }),
  split: z.enum(TAG_SPLITS),
  /** The recording's frame folder (relative to the dataset), for agents that read frames. */
  episode_history: z.string().nullable().optional(),
  /** Where the agent saw each object the question refers to (src/generate/generate.ts `seenObjects`); absent in sets made before it was recorded. */
  seen: z.array(tagSeenObjectSchema).optional(),
});

export type TagProgram = z.infer<typeof tagProgramSchema>;
export type TagCondition = z.infer<typeof conditionSchema>;
export type TagSeenObject = z.infer<typeof tagSeenObjectSchema>;
export type TagQuestion = z.infer<typeof tagQuestionSchema>;

export function parseTagQuestions(value: unknown, file: string): TagQuestion[] {
  return validateRecords(value, tagQuestionSchema, file, "TAG-EQA questions");
}

export async function loadTagQuestions(file: string): Promise<TagQuestion[]> {
  const questions = parseTagQuestions(await readJsonFile(file), file);
  return requireRecords(questions, file, "TAG-EQA questions", "--questions takes the questions.json that eqa generate writes, with at least one question");
}
