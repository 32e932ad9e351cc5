package shop

class Ledger(var total: Long) {
  def record(amount: Long): Unit = {
    total += amount
  }

  def balance: Long = total
}

object Ledger {
  def empty(): Ledger = new Ledger(0)

  class Entry(val amount: Long) {
    def cents: Long = amount * 100
  }
}
