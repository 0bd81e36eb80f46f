// The small part of the Reflect metadata API that tsyringe (a dependency of @peculiar/x509)
// checks for when it loads. Only installed when no other polyfill is present. Metadata lives in
// a WeakMap keyed by target; getMetadata walks the prototype chain, getOwnMetadata does not.
type Key = string | symbol | undefined;
const store = new WeakMap<object, Map<Key, Map<unknown, unknown>>>();

function own(target: object, prop: Key, create: boolean): Map<unknown, unknown> | undefined {
  let byProp = store.get(target);
  if (!byProp) {
    if (!create) return undefined;
    byProp = new Map();
    store.set(target, byProp);
  }
  let entries = byProp.get(prop);
  if (!entries && create) {
    entries = new Map();
    byProp.set(prop, entries);
  }
  return entries;
}

function getOwnMetadata(key: unknown, target: object, prop?: Key): unknown {
  return own(target, prop, false)?.get(key);
}

function hasOwnMetadata(key: unknown, target: object, prop?: Key): boolean {
  return own(target, prop, false)?.has(key) ?? false;
}

function getMetadata(key: unknown, target: object, prop?: Key): unknown {
  for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
    const entries = own(t, prop, false);
    if (entries?.has(key)) return entries.get(key);
  }
  return undefined;
}

function hasMetadata(key: unknown, target: object, prop?: Key): boolean {
  for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
    if (own(t, prop, false)?.has(key)) return true;
  }
  return false;
}

function defineMetadata(key: unknown, value: unknown, target: object, prop?: Key): void {
  own(target, prop, true)!.set(key, value);
}

function metadata(key: unknown, value: unknown) {
  return (target: object, prop?: Key): void => defineMetadata(key, value, target, prop);
}

const R = Reflect as unknown as Record<string, unknown>;
if (typeof R.getMetadata !== 'function') {
  Object.assign(R, { getMetadata, getOwnMetadata, hasMetadata, hasOwnMetadata, defineMetadata, metadata });
}

export {};
