//! Hostile-repository cases: amplihack's helpers and installers never run the repository's code (findings 5, 6, 13, 15, 17, 19, 20).
