/** Freezes a value and everything reachable from it, in place; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  // Typed arrays and DataViews with elements cannot be frozen (Object.freeze throws).
  if (ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  return value;
}

/** A deep-frozen structured clone of a value, leaving the original untouched. */
export function frozenClone<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}
