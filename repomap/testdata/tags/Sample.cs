using System;
using System.Collections.Generic;

namespace Example.Orders
{
    public interface IRepository
    {
        Order Find(int id);
    }

    public class Order : Entity
    {
        public int Id { get; set; }

        public Order(int id)
        {
            Id = id;
        }

        public decimal Total(List<decimal> prices)
        {
            return Sum(prices);
        }

        private static decimal Sum(List<decimal> prices)
        {
            decimal total = 0;
            foreach (var p in prices) total += p;
            return total;
        }
    }

    public struct Money { public decimal Amount; }

    public enum Status { Open, Closed }
}
