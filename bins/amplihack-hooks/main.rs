//! `amplihack-hooks`: argument handling and the exit code only; everything else is in
//! `amplihack-runtime`.

fn main() {
    std::process::exit(amplihack_runtime::main(
        std::env::args_os().skip(1).collect(),
    ));
}
