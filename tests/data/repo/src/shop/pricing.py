"""Price arithmetic in integer cents."""

TAX_RATE_PERCENT = 20


def apply_discount(amount_cents: int, percent: int) -> int:
    """Reduce an amount by a percentage, rounding down to whole cents."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    return amount_cents * (100 - percent) // 100


def add_tax(amount_cents: int) -> int:
    """Add value-added tax to a net amount."""
    return amount_cents + amount_cents * TAX_RATE_PERCENT // 100
