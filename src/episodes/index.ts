/**
 * Episode histories: what an agent saw. OpenEQA frame folders (HM3D, ScanNet), folders of
 * plain images and video files, opened as one `Episode`; frame sampling; image
 * preparation for models.
 */
export { framesPathProblem, openEpisode, resolveEpisodePath, type OpenEpisodeOptions } from "./open.js";
export type { Episode, EpisodeFrameImage, EpisodeKind } from "./types.js";
export { prepareImage, loadSharp, imageReadError, DECODE_OPTIONS, DEFAULT_MAX_SIDE, DEFAULT_JPEG_QUALITY, type ImageOptions, type PreparedImage } from "./image.js";
export { FrameCache, defaultFrameCache, type FrameCacheOptions } from "./frame-cache.js";
export { parseSamplingSpec, sampleFrameIndices, linspaceRoundIndices, type SamplingSpec } from "./sampling.js";
export { extractVideoFrames, VIDEO_EXTENSIONS } from "./video.js";
export { describeFfmpeg, ffmpegAvailable, findTool, type FfmpegProgram, type ResolvedTool, type ToolSearch, type ToolSource } from "./ffmpeg.js";
export { scannetPoseToEqakit, correctLinearVfov, multiplyTransforms, OPENGL_OPENCV_FLIP, type Intrinsics } from "./matrix.js";
export { FrameFolderWriter, hm3dDepthValues, encodeRgbPng, encodeDepthPng, type ObservedFrame } from "./frame-writer.js";
export { SensReader, SENS_VERSION, type SensFrame, type SensHeader } from "./scannet-sens.js";
export {
  prepareScanNetFrames,
  scanNetEpisodes,
  findSensFile,
  scanNetDownloadCommand,
  savetxtMatrix,
  OPENEQA_SCANNET_MAX_FRAMES,
  SCANNET_PNG_COMPRESSION,
  type ScanNetEpisode,
  type ScanNetPrepareOptions,
  type ScanNetProgress,
  type ScanOutcome,
} from "./scannet-prepare.js";
export { checkOpenEqaFrames, type EpisodeCheck, type FramesCheckOptions } from "./openeqa-check.js";
