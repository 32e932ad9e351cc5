import Foundation

struct Point {
    var x: Double
    var y: Double

    func length() -> Double {
        return (x * x + y * y).squareRoot()
    }
}

extension Point {
    func scaled(by factor: Double) -> Point {
        return Point(x: x * factor, y: y * factor)
    }

    struct Polar {
        var radius: Double
        func toPoint() -> Point { return Point(x: radius, y: 0) }
    }
}
