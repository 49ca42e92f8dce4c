/**
 * Each provider's documented image limits (families.json), checked before a request is sent
 * so that a request the provider would refuse fails with the limit named, not an HTTP 400.
 */
import { ModelCallError } from "./errors.js";
import type { ModelSpec } from "./names.js";
import type { ChatRequest } from "./types.js";

/** Width and height from a PNG, JPEG or WebP header; undefined for other formats or a damaged header. */
export function imageSize(data: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length >= 24 && view.getUint32(0) === 0x89504e47) return { width: view.getUint32(16), height: view.getUint32(20) };
  if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8) return jpegSize(data, view);
  if (data.length >= 30 && view.getUint32(0) === 0x52494646 && view.getUint32(8) === 0x57454250) return webpSize(data, view);
  return undefined;
}

/** Walks the JPEG segments to the first start-of-frame marker (linear in the file, each segment skipped by its length). */
function jpegSize(data: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  let offset = 2;
  while (offset + 9 < data.length) {
    if (data[offset] !== 0xff) return undefined;
    const marker = data[offset + 1]!;
    if (marker === 0xff) {
      offset++;
      continue;
    }
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: view.getUint16(offset + 5), width: view.getUint16(offset + 7) };
    offset += 2 + view.getUint16(offset + 2);
  }
  return undefined;
}

function webpSize(data: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  const chunk = String.fromCharCode(...data.subarray(12, 16));
  if (chunk === "VP8X") return { width: 1 + (data[24]! | (data[25]! << 8) | (data[26]! << 16)), height: 1 + (data[27]! | (data[28]! << 8) | (data[29]! << 16)) };
  if (chunk === "VP8 ") return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  if (chunk === "VP8L") {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  return undefined;
}

/** Refuses, before sending, a request with more images, larger images or more image bytes than the model's provider takes. */
export function checkImageLimits(spec: ModelSpec, request: ChatRequest): void {
  const limits = spec.profile.images;
  const images = request.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content.flatMap((p) => (p.type === "image" ? [p] : []))));
  if (images.length === 0) return;
  const refuse = (what: string): never => {
    throw new ModelCallError("bad_request", `${spec.name} cannot take this request: ${what} (the ${spec.profile.id} limit; set --model-option max_images/max_image_side/max_image_bytes if the provider allows more)`, spec.baseURL);
  };
  if (limits.maxCount !== undefined && images.length > limits.maxCount) refuse(`${images.length} images, more than ${limits.maxCount}`);
  const many = limits.manyOver !== undefined && images.length > limits.manyOver;
  const maxSide = many && limits.maxSidePxWhenMany !== undefined ? limits.maxSidePxWhenMany : limits.maxSidePx;
  let bytes = 0;
  for (const [index, image] of images.entries()) {
    bytes += image.data.length;
    if (limits.maxImageBytes !== undefined && image.data.length > limits.maxImageBytes) refuse(`image ${index + 1} has ${image.data.length} bytes, more than ${limits.maxImageBytes}`);
    const size = maxSide === undefined ? undefined : imageSize(image.data);
    if (size && maxSide !== undefined && Math.max(size.width, size.height) > maxSide) {
      refuse(`image ${index + 1} is ${size.width}x${size.height} px, more than ${maxSide} px a side${many ? ` when a request holds more than ${limits.manyOver} images` : ""}`);
    }
  }
  // base64 makes every 3 bytes 4
  if (limits.maxRequestBytes !== undefined && Math.ceil(bytes / 3) * 4 > limits.maxRequestBytes) refuse(`${images.length} images of ${bytes} bytes in all, more than the ${limits.maxRequestBytes}-byte request limit once encoded`);
}
