//! `amplihack`: the installer and manager. Everything lives in `amplihack-installer`.

fn main() {
    std::process::exit(amplihack_installer::cli::main());
}
