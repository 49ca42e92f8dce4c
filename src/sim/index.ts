/**
 * Active EQA environments: the environment protocol (an interface, and the same as JSON-RPC
 * over stdio), its conformance suite, and the built-in household simulator.
 */
export * from "./protocol.js";
export { StdioEnvironment, EnvironmentError, serveEnvironment, type StdioEnvironmentOptions, type EnvironmentErrorKind } from "./stdio.js";
export { parseCommandLine, type CommandLine } from "./command-line.js";
export { builtinSceneProblem, builtinSceneSeed } from "./builtin-scene.js";
export { checkEnvironment, runConformance, runManipulationConformance, type ConformanceResult, type EnvironmentCheck } from "./conformance.js";
export { ROOM_TYPES, OBJECT_STATES, objectCatalogue, catalogueType, type RoomType, type ObjectStateName, type Catalogue, type CatalogueType, type Rgb } from "./catalogue.js";
export { generateHome, homeNavGrid, roomAt, HOME_FORMAT, CEILING_HEIGHT, WALL_THICKNESS, DOOR_WIDTH, FLOOR_ID, CEILING_ID, type Home, type Room, type Door, type SceneObject } from "./home.js";
export { NavGrid, NAV_CELL_M, AGENT_RADIUS_M } from "./navgrid.js";
export { SceneRenderer, cameraFor, type RenderOptions, type Rendered } from "./render.js";
export { HouseholdEnvironment, DEFAULT_CAMERA_HEIGHT, type HouseholdOptions } from "./household.js";
export { renderPlan, writeHome } from "./plan.js";
export { loadHome, parseHome } from "./home-file.js";
export { manipulate, objectName, distanceToBox, contents, type Reach, type ManipulationOutcome } from "./manipulation.js";
export { drawnBoxes, frontSide, type DrawnBox } from "./render.js";
export { drawnParts, type Part } from "./parts.js";
export { TASK_TYPES, TaskDoer, TaskFailed, feasibleTasks, missingFor, planTask, type TaskType, type TaskSpec, type PlannedTask, type TaskDoerOptions } from "./tasks.js";
export { recordTask, planTasks, type RecordOptions, type RecordSummary, type RecordedTask } from "./record.js";
