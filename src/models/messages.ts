import type { ContentPart } from "./types.js";

/** The text of a message's content, images left out (for roles that carry text only). */
export function plainText(content: string | ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "")).join("");
}
