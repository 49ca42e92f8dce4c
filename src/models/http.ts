import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { randomUUID } from "node:crypto";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { ModelCallError, kindForStatus, networkError, retryAfterFromHeaders } from "./errors.js";
import { jsonBody, type JsonBody } from "./inline-images.js";

// Kept-alive connections, as many as the scheduler allows: the harness's own cost per call
// must stay small beside the model's latency.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: Infinity });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: Infinity });

/**
 * POSTs a JSON body and returns the parsed JSON reply: the one HTTP path of every provider.
 * Images in the body (`InlineBase64`, inline-images.ts) are written as their kept base64 bytes, the body
 * as chunks of known length (the bytes of `JSON.stringify(body)`).
 * Every failure becomes a {@link ModelCallError} whose kind tells the scheduler what to do.
 */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal, endpoint: string): Promise<unknown> {
  const reply = await send(url, headers, jsonBody(body), signal, endpoint);
  if (reply.status < 200 || reply.status >= 300) throw httpError(reply, endpoint);
  try {
    return JSON.parse(reply.text);
  } catch {
    throw new ModelCallError("bad_response", `${endpoint} answered HTTP ${reply.status} with a body that is not JSON: ${reply.text.slice(0, 120)}`, endpoint);
  }
}

/** GETs a JSON reply (a batch's state). Failures are ModelCallErrors, as postJson's. */
export async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal, endpoint: string): Promise<unknown> {
  return parseJson(await getText(url, headers, signal, endpoint), endpoint);
}

/** GETs a text reply as it is (a batch's JSONL results). */
export async function getText(url: string, headers: Record<string, string>, signal: AbortSignal, endpoint: string): Promise<string> {
  const reply = await send(url, headers, undefined, signal, endpoint, "GET");
  if (reply.status < 200 || reply.status >= 300) throw httpError(reply, endpoint);
  return reply.text;
}

/** POSTs one file as multipart/form-data with text fields beside it (OpenAI's file upload), and returns the JSON reply. */
export async function postFile(
  url: string,
  headers: Record<string, string>,
  fields: Record<string, string>,
  file: { field: string; name: string; type: string; content: string },
  signal: AbortSignal,
  endpoint: string,
): Promise<unknown> {
  const boundary = `eqakit-${randomUUID()}`;
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  parts.push(`--${boundary}\r\ncontent-disposition: form-data; name="${file.field}"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n${file.content}\r\n--${boundary}--\r\n`);
  const reply = await send(url, { ...headers, "content-type": `multipart/form-data; boundary=${boundary}` }, parts.join(""), signal, endpoint);
  if (reply.status < 200 || reply.status >= 300) throw httpError(reply, endpoint);
  return parseJson(reply, endpoint);
}

function parseJson(reply: RawReply | string, endpoint: string): unknown {
  const text = typeof reply === "string" ? reply : reply.text;
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelCallError("bad_response", `${endpoint} answered with a body that is not JSON: ${text.slice(0, 120)}`, endpoint);
  }
}

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

function send(url: string, headers: Record<string, string>, payload: string | JsonBody | undefined, signal: AbortSignal, endpoint: string, method = "POST"): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const isHttps = target.protocol === "https:";
    const request = (isHttps ? httpsRequest : httpRequest)(
      target,
      {
        method,
        agent: isHttps ? httpsAgent : httpAgent,
        headers: {
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": typeof payload === "string" ? Buffer.byteLength(payload) : payload.length }),
          ...headers,
        },
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", (error) => reject(transportError(error, signal, endpoint)));
      },
    );
    request.on("error", (error) => reject(transportError(error, signal, endpoint)));
    if (payload === undefined || typeof payload === "string") {
      request.end(payload);
      return;
    }
    // the chunks leave in one gathered write
    request.cork();
    for (const chunk of payload.chunks) request.write(chunk);
    request.end();
  });
}

function transportError(error: unknown, signal: AbortSignal, endpoint: string): ModelCallError {
  if (signal.aborted) return new ModelCallError("timeout", `request to ${endpoint} timed out`, endpoint);
  return networkError(error, endpoint);
}

function httpError(reply: RawReply, endpoint: string): ModelCallError {
  const header = (name: string): string | undefined => {
    const value = reply.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const retryAfterMs = retryAfterFromHeaders(header) ?? retryDelayFromBody(reply.text);
  const message = errorMessageFromBody(reply.text);
  return new ModelCallError(kindForStatus(reply.status, reply.text.slice(0, 4096)), `${endpoint} answered HTTP ${reply.status}${message ? `: ${message}` : ""}`, endpoint, reply.status, retryAfterMs);
}

/** `{"error": {"message": …}}` (OpenAI, Anthropic, Gemini alike), or the body's start. */
function errorMessageFromBody(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    const error = (parsed as { error?: { message?: unknown } } | null)?.error;
    if (typeof error?.message === "string") return error.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200).trim();
}

/** Gemini puts the wait in the body: `error.details[].retryDelay = "30s"`. */
function retryDelayFromBody(text: string): number | undefined {
  const match = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(text);
  return match ? Number.parseFloat(match[1]!) * 1000 : undefined;
}
