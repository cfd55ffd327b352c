//! Hostile repositories: each case builds a repository an attacker could publish, lets
//! amplihack meet it as a user would (a hook call, an install, a trust), and checks that
//! nothing of the repository ran and nothing was written outside it.
//!
//! The cases are tables, one file per area (`tests/cli/hostile_repos/*.rs`); each names the
//! finding of `shared/reference/hostile-repos.md` it proves fixed.

#[path = "hostile_repos/harness.rs"]
mod harness;

#[path = "hostile_repos/trust.rs"]
mod trust;

#[path = "hostile_repos/writes.rs"]
mod writes;

#[path = "hostile_repos/helpers.rs"]
mod helpers;
