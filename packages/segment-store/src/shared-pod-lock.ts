import type { PodWriterLock, SegmentWarning } from "./segment-store.ts";

/** What a store's way of taking the pod's writer lock gives: the lock (or lease) and its warnings. */
export interface TakenPodLock<Lock extends { release(): Promise<void> }> {
  readonly lock: Lock;
  readonly warnings: SegmentWarning[];
}

/**
 * The pod's writer lock as one store instance holds it, shared by its writers and `lockPod()`
 * callers: the first share takes it, the last gives it back, and the warnings of a takeover go
 * to the first taker only. A store implementation brings its own `take` (a lock file, a lease).
 */
export class SharedPodLock<Lock extends { release(): Promise<void> }> {
  readonly #take: () => Promise<TakenPodLock<Lock>>;
  #hold: { acquired: Promise<TakenPodLock<Lock>>; users: number; warned: boolean } | undefined;
  // A new take waits for the last release, so one instance never holds the lock twice.
  #released: Promise<void> = Promise.resolve();

  constructor(take: () => Promise<TakenPodLock<Lock>>) {
    this.#take = take;
  }

  /** Takes a share (the first share takes the lock); resolves with the lock and, for the first taker, its warnings. */
  async enter(): Promise<TakenPodLock<Lock>> {
    if (this.#hold === undefined) {
      this.#hold = { acquired: this.#released.then(() => this.#take()), users: 0, warned: false };
    }
    const hold = this.#hold;
    hold.users += 1;
    try {
      const { lock, warnings } = await hold.acquired;
      if (hold.warned) return { lock, warnings: [] };
      hold.warned = true;
      return { lock, warnings };
    } catch (error) {
      hold.users -= 1;
      if (this.#hold === hold) this.#hold = undefined;
      throw error;
    }
  }

  /** Gives a share back; the last one releases the lock. */
  leave(): Promise<void> {
    const hold = this.#hold;
    if (hold === undefined) return Promise.resolve();
    hold.users -= 1;
    if (hold.users > 0) return Promise.resolve();
    this.#hold = undefined;
    return this.#release(hold);
  }

  /** A `lockPod()` share: its warnings and an idempotent release. */
  async share(): Promise<PodWriterLock> {
    const { warnings } = await this.enter();
    let released: Promise<void> | undefined;
    return {
      warnings,
      release: () => {
        released ??= this.leave();
        return released;
      },
    };
  }

  /** Releases the lock whatever shares are left (the store is closing) and waits for every release. */
  async releaseAll(): Promise<void> {
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold !== undefined) await this.#release(hold);
    await this.#released;
  }

  #release(hold: { acquired: Promise<TakenPodLock<Lock>> }): Promise<void> {
    const released = hold.acquired.then(
      ({ lock }) => lock.release(),
      () => undefined,
    );
    this.#released = released.catch(() => undefined);
    return released;
  }
}
