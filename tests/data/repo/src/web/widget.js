/**
 * Render the cart badge with the number of items.
 */
export function renderCartBadge(count) {
  const badge = document.createElement("span");
  badge.textContent = String(count);
  return badge;
}

export class Carousel {
  constructor(slides) {
    this.slides = slides;
    this.index = 0;
  }

  /** Show the next slide, wrapping around. */
  next() {
    this.index = (this.index + 1) % this.slides.length;
    return this.slides[this.index];
  }
}
