//! Event append throughput.

fn main() {}
