import Foundation

let maxItems = 10

/// A generic repository.
@available(macOS 10.15, *)
public class Repository<T: Entity>: Base, Store {
    private var items: [T] = []

    init(name: String) {
        self.name = name
    }

    func find(id: Int) -> T? {
        return items.first { $0.id == id }
    }

    class Cursor {
        func next() -> T? { nil }
    }
}

protocol Store {
    func find(id: Int) -> Entity?
}

struct Point {
    var x: Int
    var y: Int
}

enum Level {
    case low, high
}

extension Point: CustomStringConvertible {
    var description: String { "(\(x), \(y))" }
}

typealias Names = [String]

func clamp(_ value: Int, low: Int) -> Int {
    let pick = { (a: Int, b: Int) in max(a, b) }
    return pick(value, low)
}

print(clamp(1, low: 2))
