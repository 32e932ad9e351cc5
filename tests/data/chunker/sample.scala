package com.example.sample

import scala.collection.mutable

/** A generic repository. */
@deprecated("use Store", "1.0")
class Repository[T <: Entity](name: String) extends Base with Store[T] {
  private val items = mutable.ListBuffer[T]()

  def this() = this("default")

  def find(id: Int): Option[T] = items.find(item => item.id == id)

  class Cursor {
    def next(): Option[T] = None
  }
}

trait Store[T] {
  def find(id: Int): Option[T]
}

object Repository {
  val MaxItems = 10

  def apply(): Repository[Entity] = new Repository()
}

case class Point(x: Int, y: Int)

type Names = List[String]

def clamp(value: Int, low: Int): Int = {
  val pick = (a: Int, b: Int) => math.max(a, b)
  pick(value, low)
}
