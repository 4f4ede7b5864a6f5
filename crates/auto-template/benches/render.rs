//! Parse and render benchmarks (filled in below).
fn main() {}
