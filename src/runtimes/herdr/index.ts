export { HerdrRuntime, type HerdrRuntimeOptions } from "./runtime.ts";
export { herdrServerAnswers, type HerdrProbeOptions } from "./probe.ts";
export { MIN_HERDR_VERSION, RECOMMENDED_HERDR_VERSION } from "./version.ts";
