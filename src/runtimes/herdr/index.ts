export { HerdrRuntime, type HerdrRuntimeOptions } from "./runtime.js";
export { herdrServerAnswers, type HerdrProbeOptions } from "./probe.js";
export { MIN_HERDR_VERSION, RECOMMENDED_HERDR_VERSION } from "./version.js";
