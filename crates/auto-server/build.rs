//! The Studio's built pages are embedded by `include_dir!`, which tracks the files it read but
//! not the files added to the folder: the folder is watched here, so a new build is embedded.

fn main() {
    println!("cargo:rerun-if-changed=../../studio/dist");
}
