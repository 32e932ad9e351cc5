export namespace Geometry {
  export interface Shape {
    area(): number;
    name: string;
  }

  export class Circle implements Shape {
    name = "circle";
    constructor(private radius: number) {}

    area(): number {
      return Math.PI * this.radius ** 2;
    }
  }
}

export class Canvas {
  private shapes: Geometry.Shape[] = [];

  add(shape: Geometry.Shape): void {
    this.shapes.push(shape);
  }

  total(): number {
    return this.shapes.reduce((sum, s) => sum + s.area(), 0);
  }
}
