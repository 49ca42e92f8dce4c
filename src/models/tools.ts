import type { ToolCall } from "./types.js";

/** Arguments of a tool call from their JSON text; text that is not a JSON object is kept under `_raw`. */
export function parseToolArguments(text: unknown): Record<string, unknown> {
  if (text !== null && typeof text === "object" && !Array.isArray(text)) return text as Record<string, unknown>;
  if (typeof text !== "string" || text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _raw: text };
}

/** Tool calls of a reply, or nothing when there are none (so that replies without tools keep their shape). */
export function withToolCalls(calls: ToolCall[]): { toolCalls?: ToolCall[] } {
  return calls.length > 0 ? { toolCalls: calls } : {};
}
