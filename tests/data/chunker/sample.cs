using System;
using System.Collections.Generic;

namespace Sample.Chunker
{
    /// <summary>A generic repository.</summary>
    [Serializable]
    public class Repository<T> : IRepository<T> where T : class
    {
        private readonly List<T> items = new List<T>();

        public int Count { get; private set; }

        public Repository(int capacity)
        {
            items = new List<T>(capacity);
        }

        [Obsolete("use Find")]
        public T Get(int id)
        {
            Func<T, bool> match = item => item != null;
            return items.Find(x => match(x));
        }

        public class Entry
        {
            public string Key { get; set; }
        }
    }

    public interface IRepository<T>
    {
        T Get(int id);
    }

    public struct Point
    {
        public int X;
        public int Y;
    }

    public enum Level { Low, High }

    public record Person(string Name, int Age);
}
