package shop

class Queue<T> {
    private val items = mutableListOf<T>()

    fun enqueue(item: T) {
        items.add(item)
    }

    fun size(): Int = items.size

    class Node(val value: Int) {
        fun double(): Int = value * 2
    }

    companion object {
        fun empty(): Queue<Int> = Queue()
    }
}
