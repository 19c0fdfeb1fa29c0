export interface Store<T> {
  get(key: string): T | undefined;
}

export type Key = string;

export enum Color {
  Red,
  Green,
}

export abstract class Cache<T> implements Store<T> {
  private items = new Map<Key, T>();

  get(key: Key): T | undefined {
    return this.items.get(key);
  }

  abstract evict(key: Key): void;
}

namespace Util {
  export function clamp(n: number): number {
    return Math.min(n, 1);
  }
}

export const makeCache = <T>(): Store<T> => new LruCache<T>();

export { makeCache as newCache };
export { Other } from "./other";
