// A CommonJS-style TypeScript module: a constructor function with methods assigned.
function Counter(this: any, start: number) {
  this.count = start;
  this.reset = function (): void {
    this.count = 0;
  };
}

Counter.prototype.increment = function increment(step: number): number {
  this.count += step;
  return this.count;
};

Counter.fromString = (text: string) => new (Counter as any)(Number(text));

exports.formatCount = function formatCount(value: number): string {
  return `count: ${value}`;
};
