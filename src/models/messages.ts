import type { ChatMessage, ContentPart } from "./types.js";

/** The text of a message's content, images left out (for roles that carry text only). */
export function plainText(content: string | ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/**
 * Appends a follow-up question after the model's `reply`. An empty reply is not sent back as
 * an empty assistant turn (Anthropic and Gemini refuse one): the follow-up joins the last
 * user turn instead, so the conversation stays valid on every provider.
 */
export function askAgain(messages: ChatMessage[], reply: string | null, followUp: string): ChatMessage[] {
  if (reply !== null && reply.trim() !== "") return [...messages, { role: "assistant", content: reply }, { role: "user", content: followUp }];
  const last = messages.at(-1);
  if (last?.role !== "user") return [...messages, { role: "user", content: followUp }];
  const content: string | ContentPart[] = typeof last.content === "string" ? `${last.content}\n\n${followUp}` : [...last.content, { type: "text", text: `\n\n${followUp}` }];
  return [...messages.slice(0, -1), { ...last, content }];
}
