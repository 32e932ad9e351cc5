"""A tiny ledger: small classes, a nested class, module-level helpers."""

from dataclasses import dataclass

RATE = 3


@dataclass
class Account:
    """One account."""

    owner: str
    cents: int = 0

    def record(self, amount: int) -> None:
        self.cents += amount

    def balance(self) -> int:
        return self.cents

    class Auditor:
        def audit(self, account: "Account") -> bool:
            return account.balance() >= 0


def open_account(owner: str) -> Account:
    return Account(owner)
