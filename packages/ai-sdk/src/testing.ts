export { startFakeProvider } from "./fake-provider.ts";
export type {
  FakeAnswer,
  FakeProvider,
  FakeRaw,
  FakeReply,
  FakeScript,
  FakeUsage,
  FakeWire,
  RecordedRequest,
} from "./fake-provider.ts";
