/** Where a pod gets the time it renders into the system prompt. */
export interface Clock {
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = Object.freeze({ now: () => new Date() });
