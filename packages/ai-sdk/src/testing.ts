export { startFakeProvider } from "./fake-provider.ts";
export type {
  FakeAnswer,
  FakeProvider,
  FakeRaw,
  FakeReasoning,
  FakeReply,
  FakeScript,
  FakeUsage,
  FakeWire,
  RecordedRequest,
} from "./fake-provider.ts";
