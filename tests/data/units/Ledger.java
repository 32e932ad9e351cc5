package shop;

/** A ledger of entries. */
public class Ledger {
    private long total;

    public Ledger() {
        this.total = 0;
    }

    public void record(long amount) {
        total += amount;
    }

    public long balance() {
        return total;
    }

    interface Auditor {
        boolean audit(Ledger ledger);
    }

    static class Entry {
        long amount;

        long cents() {
            return amount * 100;
        }
    }
}
