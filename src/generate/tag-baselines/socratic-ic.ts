/** TAG-EQA's "Socratic LLM + Image captions" (seed 002, section 4; Table 2's first row): see `socratic.ts`. */
import { socraticBaseline } from "./socratic.js";

export const socraticIc = socraticBaseline("socratic-ic", false);
