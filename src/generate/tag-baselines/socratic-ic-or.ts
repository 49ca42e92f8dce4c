/**
 * TAG-EQA's "Socratic LLM + Image captions + Object recognition" (seed 002, section 4; Table 2's
 * second row): the visible objects' types in the caption prompt, and each observation's objects
 * with their positions estimated from the ground-truth masks and depth. See `socratic.ts`.
 */
import { socraticBaseline } from "./socratic.js";

export const socraticIcOr = socraticBaseline("socratic-ic-or", true);
