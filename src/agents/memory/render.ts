import { join } from "node:path";
import { writeFileAtomically } from "../../core/index.js";
import { loadSharp, type Episode } from "../../episodes/index.js";
import { instanceCrop } from "./build.js";
import type { SceneGraph } from "./types.js";

/** A colour per label (stable: from the label's characters). */
function labelColour(label: string): string {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `hsl(${h % 360}, 80%, 45%)`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);
}

/**
 * A top-down picture of the memory: the map's points (grey, darker where higher) seen from
 * above with x to the right and z down, and each instance's box with its id and label.
 * Undefined when the graph has no positions.
 */
export async function renderTopDown(graph: SceneGraph, mapPoints: Float32Array, size = 800): Promise<Buffer | undefined> {
  const boxes = graph.instances.filter((i) => i.box);
  if (!graph.hasPositions || (mapPoints.length === 0 && boxes.length === 0)) return undefined;
  let minX = Infinity, maxX = -Infinity, minZ = Infinity, maxZ = -Infinity, minY = Infinity, maxY = -Infinity;
  const extend = (x: number, y: number, z: number): void => {
    minX = Math.min(minX, x); maxX = Math.max(maxX, x);
    minZ = Math.min(minZ, z); maxZ = Math.max(maxZ, z);
    minY = Math.min(minY, y); maxY = Math.max(maxY, y);
  };
  for (let p = 0; p < mapPoints.length; p += 3) extend(mapPoints[p]!, mapPoints[p + 1]!, mapPoints[p + 2]!);
  for (const i of boxes) {
    extend(i.box!.min[0], i.box!.min[1], i.box!.min[2]);
    extend(i.box!.max[0], i.box!.max[1], i.box!.max[2]);
  }
  const margin = 20;
  const span = Math.max(maxX - minX, maxZ - minZ, 0.5);
  const scale = (size - 2 * margin) / span;
  const width = Math.ceil((maxX - minX) * scale) + 2 * margin;
  const height = Math.ceil((maxZ - minZ) * scale) + 2 * margin;
  const pixels = Buffer.alloc(width * height * 3, 255);
  const yRange = Math.max(1e-6, maxY - minY);
  for (let p = 0; p < mapPoints.length; p += 3) {
    const u = Math.round((mapPoints[p]! - minX) * scale) + margin;
    const v = Math.round((mapPoints[p + 2]! - minZ) * scale) + margin;
    if (u < 0 || v < 0 || u >= width || v >= height) continue;
    const shade = Math.round(200 - 150 * ((mapPoints[p + 1]! - minY) / yRange));
    const o = (v * width + u) * 3;
    if (pixels[o]! > shade) pixels.fill(shade, o, o + 3);
  }
  const shapes = boxes.map((i) => {
    const x = (i.box!.min[0] - minX) * scale + margin;
    const y = (i.box!.min[2] - minZ) * scale + margin;
    const w = Math.max(2, (i.box!.max[0] - i.box!.min[0]) * scale);
    const h = Math.max(2, (i.box!.max[2] - i.box!.min[2]) * scale);
    const colour = labelColour(i.label);
    return `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="none" stroke="${colour}" stroke-width="2"/>` +
      `<text x="${x.toFixed(1)}" y="${Math.max(10, y - 3).toFixed(1)}" font-family="sans-serif" font-size="12" fill="${colour}">${escapeXml(`${i.id} ${i.label}`)}</text>`;
  });
  const cameras = graph.agentPositions.map((a) => `<circle cx="${((a.position[0] - minX) * scale + margin).toFixed(1)}" cy="${((a.position[2] - minZ) * scale + margin).toFixed(1)}" r="2" fill="#1565c0"/>`);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${cameras.join("")}${shapes.join("")}</svg>`;
  const sharp = await loadSharp();
  return sharp(pixels, { raw: { width, height, channels: 3 } }).composite([{ input: Buffer.from(svg), top: 0, left: 0 }]).png().toBuffer();
}

/**
 * Writes `scene-graph.json` and, with positions, `topdown.png` into `dir`; with the episode,
 * also each instance's best crop as `crops/<id>.png`. Returns the files written.
 */
export async function writeMemory(dir: string, graph: SceneGraph, mapPoints: Float32Array, episode?: Episode): Promise<string[]> {
  const files = [join(dir, "scene-graph.json")];
  await writeFileAtomically(files[0]!, `${JSON.stringify(graph, null, 2)}\n`);
  const picture = await renderTopDown(graph, mapPoints);
  if (picture) {
    files.push(join(dir, "topdown.png"));
    await writeFileAtomically(files[1]!, picture);
  }
  if (episode && graph.instances.length > 0) {
    for (const instance of graph.instances) {
      const file = join(dir, "crops", `${instance.id}.png`);
      await writeFileAtomically(file, (await instanceCrop(episode, instance)).data);
    }
    files.push(join(dir, "crops", "*.png"));
  }
  return files;
}
