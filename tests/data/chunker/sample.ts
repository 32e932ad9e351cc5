// Sample TypeScript module.
import { EventEmitter } from "events";

export const VERSION: string = "1.0";

/** A user record. */
export interface User {
  id: number;
  name: string;
}

export type UserId = number | string;

export enum Color {
  Red,
  Green,
}

function component(target: Function): void {}

@component
export class Repository<T extends User> extends EventEmitter {
  private items: Map<number, T> = new Map();

  constructor(private readonly name: string) {
    super();
  }

  /** Find one item. */
  public find(id: number): T | undefined {
    return this.items.get(id);
  }
}

export namespace Utils {
  export function clamp(value: number, low: number, high: number): number {
    return Math.min(Math.max(value, low), high);
  }
}

export const double = (x: number): number => x * 2;

abstract class Shape {
  abstract area(): number;
}

const repo = new Repository<User>("users");
console.log(repo.find(1));
