import type { Pool } from "pg";

/** Values kept per `pg` pool and schema in this process; a pool that is dropped takes its values with it. */
export class PerPoolAndSchema<T> {
  readonly #byPool = new WeakMap<Pool, Map<string, T>>();

  /** The value of `pool` and `schema`, made by `make` the first time. */
  get(pool: Pool, schema: string, make: () => T): T {
    let bySchema = this.#byPool.get(pool);
    if (bySchema === undefined) {
      bySchema = new Map();
      this.#byPool.set(pool, bySchema);
    }
    let value = bySchema.get(schema);
    if (value === undefined) {
      value = make();
      bySchema.set(schema, value);
    }
    return value;
  }

  /** Forgets the value of `pool` and `schema`, so that the next `get` makes a new one. */
  delete(pool: Pool, schema: string): void {
    this.#byPool.get(pool)?.delete(schema);
  }
}
