"""A shopping cart that keeps items in memory."""

from dataclasses import dataclass, field

from shop.pricing import apply_discount


@dataclass
class Item:
    """One line of a cart: a product and how many of it."""

    sku: str
    price_cents: int
    quantity: int = 1


@dataclass
class Cart:
    """A customer's cart."""

    items: list[Item] = field(default_factory=list)

    def add_item(self, sku: str, price_cents: int, quantity: int = 1) -> None:
        """Add a product to the cart, merging with an existing line."""
        for item in self.items:
            if item.sku == sku:
                item.quantity += quantity
                return
        self.items.append(Item(sku, price_cents, quantity))

    def remove_item(self, sku: str) -> None:
        """Remove every line of a product."""
        self.items = [i for i in self.items if i.sku != sku]

    def total_cents(self, discount_percent: int = 0) -> int:
        """Sum of all lines after the discount."""
        subtotal = sum(i.price_cents * i.quantity for i in self.items)
        return apply_discount(subtotal, discount_percent)
