//! Sample crate for the chunker tests.
use std::fmt;

/// Largest allowed size.
pub const MAX_SIZE: usize = 64;

static GREETING: &str = "hello";

/// A point in the plane.
#[derive(Debug, Clone)]
pub struct Point<T> {
    pub x: T,
    pub y: T,
}

pub enum Shape {
    Circle(f64),
    Square { side: f64 },
}

pub trait Area {
    fn area(&self) -> f64;
}

impl<T: fmt::Display> fmt::Display for Point<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl Point<f64> {
    /// Creates a point.
    pub fn new(x: f64, y: f64) -> Self {
        Point { x, y }
    }

    pub fn scale(&self, factor: f64) -> Self {
        let mul = |v: f64| v * factor;
        Point { x: mul(self.x), y: mul(self.y) }
    }
}

pub type Pair = (i32, i32);

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

mod geometry {
    pub fn distance(a: f64, b: f64) -> f64 {
        (a - b).abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_points() {
        let p = Point::new(1.0, 2.0);
        assert_eq!(p.scale(2.0).x, 2.0);
    }
}
