# Sourced (POSIX sh) by packaging/build and test.sh: how amplihack is built static. Sets `target`
# (AMPLIHACK_BUILD_TARGET, else this machine's) and, on Linux, exports cargo's RUSTFLAGS for that
# target only, so that build scripts and proc macros stay dynamic, as they must. A static binary
# skips the dynamic loader, which was a third of the hook's start-up cost (ratio to /bin/true 1.57
# dynamic, 1.08 static). Anything else built with `--target "$target"` in the same environment (the
# benchmarks' harnesses) shares the build.
target=${AMPLIHACK_BUILD_TARGET:-$(rustc -vV | sed -n 's/^host: //p')}
case "$target" in
  *-linux-gnu*|*-linux-musl*)
    flags_var="CARGO_TARGET_$(printf '%s' "$target" | tr 'a-z.-' 'A-Z__')_RUSTFLAGS"
    export "$flags_var=-C target-feature=+crt-static"
    ;;
esac
