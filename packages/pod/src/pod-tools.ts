import type { Scope } from "@insomnia/scope";
import type { Tool } from "@insomnia/worker";

/** What a {@link PodToolFactory} gets: what the pod built once from its manifest. */
export interface PodToolContext {
  /** The pod's scope, built from the manifest's `scope` rules; tools that touch files check it. */
  readonly scope: Scope;
  /** The pod's working directory (`manifest.pod.pwd`). */
  readonly pwd: string;
  /** The signal the pod was given (`PodDeps.signal`), for tools that start something long-lived. */
  readonly signal?: AbortSignal;
}

/** Makes some of a pod's tools; the pod calls it once, before its prompt is rendered, and registers what it returns. */
export type PodToolFactory = (context: PodToolContext) => readonly Tool[] | Promise<readonly Tool[]>;

/** The tools of every factory, in order. */
export async function makePodTools(
  factories: readonly PodToolFactory[],
  context: PodToolContext,
): Promise<readonly Tool[]> {
  const made = await Promise.all(factories.map((factory) => factory(context)));
  return made.flat();
}
