package com.example.sample

import kotlin.math.max

const val MAX_ITEMS = 10

/** A generic repository. */
@Suppress("unused")
class Repository<T : Entity>(private val name: String) : Base(), Store<T> {
    private val items = mutableListOf<T>()

    init {
        println(name)
    }

    constructor(name: String, capacity: Int) : this(name)

    fun find(id: Int): T? = items.firstOrNull { it.id == id }

    companion object {
        fun create(): Repository<Entity> = Repository("default")
    }

    inner class Cursor {
        fun next(): T? = null
    }
}

interface Store<T> {
    fun find(id: Int): T?
}

data class Point(val x: Int, val y: Int)

enum class Level { LOW, HIGH }

object Registry {
    val names = mutableListOf<String>()
}

typealias Names = List<String>

fun clamp(value: Int, low: Int): Int {
    val pick = { a: Int, b: Int -> max(a, b) }
    return pick(value, low)
}

fun main() {
    println(clamp(1, 2))
}
