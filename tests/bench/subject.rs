//! The hook binary a benchmark measures: `$AMPLIHACK_BENCH_BINARY` when set (`./test.sh` passes the
//! static build users run: the one `./install.sh` deployed, or under `--quick` the `release`
//! profile's), else `fallback`.

#![allow(dead_code)]

use std::path::PathBuf;

pub fn hooks_under_test(fallback: impl FnOnce() -> PathBuf) -> PathBuf {
    std::env::var_os("AMPLIHACK_BENCH_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(fallback)
}
