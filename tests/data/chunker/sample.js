#!/usr/bin/env node
// Sample JavaScript module for the chunker tests.
import { readFile } from "fs/promises";

const DEFAULT_PORT = 8080;

/**
 * Greets someone by name.
 * @param {string} name
 */
function greet(name, greeting = "Hello") {
  const message = `${greeting}, ${name}`;
  console.log(message);
  return message;
}

/** A small event emitter. */
class Emitter extends Base {
  constructor(options) {
    super(options);
    this.listeners = new Map();
  }

  on(event, handler) {
    const list = this.listeners.get(event) ?? [];
    list.push(handler);
    this.listeners.set(event, list);
  }

  static create() {
    return new Emitter({});
  }
}

const fetchUser = async (id) => {
  const data = await readFile(`/users/${id}.json`, "utf8");
  return JSON.parse(data);
};

export default function makeCounter() {
  let count = 0;
  return () => ++count;
}

greet("world");
console.log(DEFAULT_PORT);
