//! Hostile-repository cases: nothing of the repository steers amplihack's writes or switches on its features (findings 1, 4, 12, 18).
