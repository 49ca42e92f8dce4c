import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";

/** A request the loopback server received, as the wire carried it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** The raw body bytes as text: what the client really sent. */
  rawBody: string;
  body: unknown;
}

/** What the server answers to one request. */
export interface ScriptedReply {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as it is (for garbage replies). */
  body?: unknown;
  /** Wait this long before answering (for latency and timeouts). */
  delayMs?: number;
  /** Drop the connection without answering (a reset). */
  reset?: boolean;
}

export type Script = (request: ReceivedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

export interface ModelServer {
  /** e.g. http://127.0.0.1:PORT */
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts an HTTP server on 127.0.0.1 answering every request from `script`. */
export async function startModelServer(script: Script): Promise<ModelServer> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    let body: unknown = rawBody;
    try {
      body = JSON.parse(rawBody);
    } catch {
      // keep the raw text
    }
    const received: ReceivedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, rawBody, body };
    const index = requests.push(received) - 1;
    const reply = await script(received, index);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.reset) {
      req.socket.destroy();
      return;
    }
    const payload = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {});
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(payload);
  }
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Runs `body` with a server answering from `script`, closing it afterwards. */
export async function withModelServer(script: Script, body: (server: ModelServer) => Promise<void>): Promise<void> {
  const server = await startModelServer(script);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

/** An OpenAI chat-completions reply. */
export function openAiReply(text: string | null, usage = { prompt_tokens: 10, completion_tokens: 3 }): ScriptedReply {
  return {
    body: {
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 0,
      model: "test",
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/** An Anthropic Messages reply. */
export function anthropicReply(text: string, usage = { input_tokens: 10, output_tokens: 3 }): ScriptedReply {
  return {
    body: {
      id: "msg_test",
      type: "message",
      role: "assistant",
      model: "test",
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage,
    },
  };
}

/** A Gemini generateContent reply. */
export function geminiReply(text: string, usage = { promptTokenCount: 10, candidatesTokenCount: 3 }): ScriptedReply {
  return {
    body: {
      candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount },
    },
  };
}

/** The text of the last user message of an OpenAI-style request body. */
export function lastUserText(request: ReceivedRequest): string {
  const body = request.body as { messages?: { role: string; content: unknown }[] };
  const last = [...(body.messages ?? [])].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : "";
}

/**
 * A loopback agent model and LLM-Match judge in one: the judge gives 5 when the response is the
 * answer word for word, else 1; every other request gets `agentReply`.
 */
export function exactMatchJudgeScript(agentReply: string): Script {
  return (request) => {
    const text = lastUserText(request);
    if (!text.includes("Your mark")) return openAiReply(agentReply);
    const answer = [...text.matchAll(/^Answer: (.*)$/gm)].at(-1)?.[1];
    const response = [...text.matchAll(/^Response: (.*)$/gm)].at(-1)?.[1];
    return openAiReply(`Your mark: ${answer !== undefined && answer === response ? 5 : 1}`);
  };
}

/** A loopback URL where nothing listens (a port bound, then released): connecting is refused. */
export async function closedPortUrl(): Promise<string> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
