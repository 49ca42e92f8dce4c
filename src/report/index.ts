export * from "./text.js";
export * from "./agreement-text.js";
export * from "./runs.js";
export { buildHtmlReport, type ReportOptions } from "./html.js";
export { escapeHtml } from "./html-parts.js";
export type { HeadlineMetric } from "./run-kinds.js";
export { createViewerApp, startViewer, isSuspiciousTarget, fileInside, type Viewer, type ViewerOptions } from "./viewer.js";
export { RATINGS_FILE, RATINGS_FILE_LIMIT, readRatings, ratingsExport, type Rating } from "./viewer-data.js";
export { structuredAnswerText, type TagRunPart, type TagRunQuestion, type TagRunSummary, type TagEstimate, type TagScorePair, type TagErrorCounts } from "./tag-runs.js";
