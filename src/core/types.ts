/** The seven OpenEQA question categories, as spelled in `open-eqa-v0.json`. */
export const OPENEQA_CATEGORIES = [
  "object recognition",
  "object localization",
  "attribute recognition",
  "spatial understanding",
  "object state recognition",
  "functional reasoning",
  "world knowledge",
] as const;

export type OpenEqaCategory = (typeof OPENEQA_CATEGORIES)[number];

/** A benchmark question with its reference answer(s). */
export interface Question {
  questionId: string;
  question: string;
  answer: string;
  category: OpenEqaCategory;
  /** e.g. `hm3d-v0/000-hm3d-BFRyYbPCCPE`: the source is the part before the slash. */
  episodeHistory: string;
  /** Further correct answers (OpenEQA gives them for object-localization questions). */
  extraAnswers?: string[];
}

/** An agent's answer; null when it gave none. */
export interface Prediction {
  questionId: string;
  answer: string | null;
}

/** The data source of an episode history (`hm3d-v0`, `scannet-v0`, …). */
export function episodeSource(episodeHistory: string): string {
  const slash = episodeHistory.indexOf("/");
  return slash === -1 ? episodeHistory : episodeHistory.slice(0, slash);
}
