export { describeSegmentStoreConformance } from "./conformance.ts";
export type {
  ConformanceCapability,
  ConformanceOptions,
  SegmentStoreDamage,
  SegmentStoreFactory,
  SegmentStoreHarness,
  WorkerThreadStore,
} from "./conformance.ts";
