# Sourced (POSIX sh) by packaging/build and test.sh: how amplihack is built static. Sets `target`
# (AMPLIHACK_BUILD_TARGET, else this machine's) and, on Linux, exports cargo's RUSTFLAGS for that
# target only, so that build scripts and proc macros stay dynamic, as they must. A static binary
# skips the dynamic loader, which was a third of the hook's start-up cost (ratio to /bin/true 1.57
# dynamic, 1.08 static). And not position-independent (`relocation-model=static`): a static-pie
# binary relocates itself at every start (14,400 relative relocations, 56 pages written, a fifth of
# the hook's own CPU time); a fixed-address one does nothing, and a call with nothing to do went
# from 0.68 to 0.52 ms (issue 36). What that gives up is ASLR for the binary's own image (the
# stack, heap and mappings stay randomised), in a memory-safe program. Anything else built with
# `--target "$target"` in the same environment (the benchmarks' harnesses) shares the build.
target=${AMPLIHACK_BUILD_TARGET:-$(rustc -vV | sed -n 's/^host: //p')}
case "$target" in
  *-linux-gnu*|*-linux-musl*)
    flags_var="CARGO_TARGET_$(printf '%s' "$target" | tr 'a-z.-' 'A-Z__')_RUSTFLAGS"
    export "$flags_var=-C target-feature=+crt-static -C relocation-model=static"
    ;;
esac
