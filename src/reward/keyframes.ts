import { dirname } from "node:path";
import { UserError, resolveInside } from "../core/index.js";
import type { RewardInstance } from "../data/index.js";
import { linspaceRoundIndices, openEpisode, resolveEpisodePath, type Episode, type EpisodeFrameImage, type FrameCache, type ImageOptions } from "../episodes/index.js";

/** Where an instance's frames are: its own `frames` path (relative to its file), else `episode_history` under a frames root. */
export interface FrameLocation {
  /** The instance file's path (its folder anchors relative `frames` paths). */
  instanceFile: string;
  /** The root holding one folder or video per episode history (`--frames`). */
  framesRoot?: string;
}

/**
 * Opens episodes once each and prepares instances' keyframes. Keyframes are the instance's
 * `keyframes`, else N spread evenly over the episode (`round(linspace(0, n-1, N))`, the way
 * OpenEQA's baselines pick frames; the paper uses N = 5 and does not say how it picks them).
 */
export class KeyframeLoader {
  private readonly episodes = new Map<string, Promise<Episode>>();

  constructor(
    private readonly location: FrameLocation,
    private readonly image: ImageOptions = {},
    /** Where the keyframes' preparations are kept (default: the default frame cache). */
    private readonly frameCache?: FrameCache,
  ) {}

  episodePath(instance: RewardInstance): string {
    if (instance.frames !== undefined) {
      return resolveInside(dirname(this.location.instanceFile), instance.frames, { file: this.location.instanceFile, id: instance.id, field: "frames" }, "an instance's frames path is relative to its file and stays inside that file's folder");
    }
    const root = this.location.framesRoot;
    if (root === undefined) {
      throw new UserError(`no frames for episode ${instance.episodeHistory}`, { file: this.location.instanceFile, id: instance.id, field: "frames" }, "pass --frames DIR (one folder or video per episode_history), or give the instance a frames path");
    }
    const path = resolveEpisodePath(root, instance.episodeHistory, { file: this.location.instanceFile, id: instance.id, field: "episode_history" });
    if (path === undefined) {
      throw new UserError(`no frames for episode ${instance.episodeHistory} under ${root}`, { file: this.location.instanceFile, id: instance.id, field: "episode_history" }, "check --frames: it should hold one folder (or video) per episode_history");
    }
    return path;
  }

  async episode(instance: RewardInstance): Promise<Episode> {
    const path = this.episodePath(instance);
    let episode = this.episodes.get(path);
    if (!episode) {
      episode = openEpisode(path, instance.episodeHistory, this.frameCache ? { frameCache: this.frameCache } : {});
      this.episodes.set(path, episode);
    }
    return episode;
  }

  async keyframeIndices(instance: RewardInstance): Promise<number[]> {
    const episode = await this.episode(instance);
    if (instance.keyframes) {
      const bad = instance.keyframes.find((i) => i >= episode.frameCount);
      if (bad !== undefined) throw new UserError(`keyframe ${bad} is outside the episode (frames 0-${episode.frameCount - 1})`, { file: this.location.instanceFile, id: instance.id, field: "keyframes" });
      return instance.keyframes;
    }
    return linspaceRoundIndices(episode.frameCount, instance.numKeyframes);
  }

  async keyframes(instance: RewardInstance): Promise<EpisodeFrameImage[]> {
    const episode = await this.episode(instance);
    return episode.images(await this.keyframeIndices(instance), this.image);
  }
}
