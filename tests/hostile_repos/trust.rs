//! Hostile-repository cases: what trust covers is exactly what runs (findings 2, 3, 7, 8, 11, 14, 16, 21).
