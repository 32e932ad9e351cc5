namespace Shop.Billing;

public class Invoice
{
    private decimal amount;

    public Invoice(decimal amount)
    {
        this.amount = amount;
    }

    public decimal Tax() => amount * 0.2m;
}
