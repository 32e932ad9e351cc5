using System;

namespace Shop.Orders
{
    public class Order
    {
        public int Id { get; set; }

        public void Add(int quantity)
        {
            Console.WriteLine(quantity);
        }

        public class Line
        {
            public int Quantity;

            public int Total() => Quantity * 2;
        }
    }

    public interface IOrderStore
    {
        Order Find(int id);
    }
}
