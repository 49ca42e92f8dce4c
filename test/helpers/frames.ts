import { mkdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";

/**
 * Writes an OpenEQA-layout RGB-only episode folder (`NNNNN-rgb.png`, as the reference's
 * --rgb-only extraction writes): each frame a different solid colour with a lighter square,
 * so frames differ in content and in hash.
 */
export async function writeRgbEpisode(dir: string, frames: number, width = 640, height = 360): Promise<string> {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < frames; i++) {
    const hue = (i * 47) % 256;
    const square = await sharp({ create: { width: Math.round(width / 4), height: Math.round(height / 4), channels: 3, background: { r: 255, g: 255 - hue, b: hue } } }).png().toBuffer();
    await sharp({ create: { width, height, channels: 3, background: { r: hue, g: (hue * 3) % 256, b: 255 - hue } } })
      .composite([{ input: square, left: (i * 13) % (width - Math.round(width / 4)), top: Math.round(height / 3) }])
      .png()
      .toFile(join(dir, `${String(i).padStart(5, "0")}-rgb.png`));
  }
  return dir;
}
