//! Shapes and their areas.

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

define_shape!(Triangle, 3);

pub trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String {
        String::from("shape")
    }
}

pub struct Circle {
    radius: f64,
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        3.14 * square!(self.radius)
    }
}

impl Circle {
    pub fn new(radius: f64) -> Self {
        Circle { radius }
    }
}

pub mod units {
    pub fn to_cm(inches: f64) -> f64 {
        inches * 2.54
    }
}
