import { UserError } from "../core/index.js";
import type { ModelSpec } from "../models/index.js";
import type { ChatRequest } from "../models/index.js";

/** What a hosted provider accepts in one request, from its documentation. */
export interface PayloadLimits {
  maxImages: number;
  maxRequestBytes: number;
  source: string;
}

/**
 * Limits of the hosted APIs. Self-hosted servers (vLLM, Ollama, a custom base URL) set their
 * own (vLLM's `--limit-mm-per-prompt`), so they are not checked here.
 */
const HOSTED_LIMITS: Record<string, PayloadLimits> = {
  "openai https://api.openai.com/v1": { maxImages: 500, maxRequestBytes: 50 * 1024 * 1024, source: "OpenAI: 500 images, 50 MB per request" },
  "anthropic https://api.anthropic.com": { maxImages: 100, maxRequestBytes: 32 * 1024 * 1024, source: "Anthropic: 100 images, 32 MB per request" },
  "google https://generativelanguage.googleapis.com": { maxImages: 3000, maxRequestBytes: 20 * 1024 * 1024, source: "Gemini: 20 MB of inline data per request" },
};

export function payloadLimits(spec: ModelSpec): PayloadLimits | undefined {
  return HOSTED_LIMITS[`${spec.protocol} ${spec.baseURL}`];
}

/** Refuses, before any call, a frame count the provider cannot take in one request. */
export function checkFrameCount(spec: ModelSpec, frames: number, flag: string): void {
  const limits = payloadLimits(spec);
  if (limits && frames > limits.maxImages) {
    throw new UserError(`${spec.name} takes at most ${limits.maxImages} images in a request, and ${frames} frames were asked for`, { field: flag }, `lower ${flag} (${limits.source})`);
  }
}

/** The size a request will have on the wire: images travel base64-encoded. */
export function requestBytes(request: ChatRequest): number {
  let bytes = 0;
  for (const message of request.messages) {
    if (typeof message.content === "string") bytes += Buffer.byteLength(message.content);
    else for (const part of message.content) bytes += part.type === "text" ? Buffer.byteLength(part.text) : Math.ceil(part.data.byteLength / 3) * 4;
  }
  return bytes;
}

/** Says why a request is too large for the provider, or undefined when it fits. */
export function oversizeReason(spec: ModelSpec, request: ChatRequest): string | undefined {
  const limits = payloadLimits(spec);
  if (!limits) return undefined;
  const bytes = requestBytes(request);
  if (bytes <= limits.maxRequestBytes) return undefined;
  return `the request would be ${(bytes / 1e6).toFixed(1)} MB, over the limit of ${spec.name} (${limits.source}): use fewer frames, a smaller --image-size or --image-format jpeg`;
}
