//! How every benchmark judges a figure: a goal, and a failure only at twice the goal.
//!
//! Each figure is a ratio against a reference measured in the same run, interleaved. Machines of
//! the same kind still differ in how those costs compare (a 100-plugin read against a process
//! start was 1.2x on one machine and 1.65x on another), so a figure over its goal is reported,
//! and the build fails only on a regression no machine explains: over [`FAIL_FACTOR`] times the
//! goal. A figure over its goal is measured again, up to [`ATTEMPTS`] times in all, and the best
//! counts, so a noisy minute on a shared machine neither fails the build nor hides a slow one.

#![allow(dead_code)]

/// The build fails over this many times a figure's goal.
pub const FAIL_FACTOR: f64 = 2.0;
/// Measurements of one figure, at most.
pub const ATTEMPTS: usize = 3;

/// A figure's verdict against its goal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    MeetsGoal,
    OverGoal,
    Fail,
}

/// The verdict of `best` against `goal` (lower is better).
pub fn verdict(best: f64, goal: f64) -> Verdict {
    if best <= goal {
        Verdict::MeetsGoal
    } else if best <= goal * FAIL_FACTOR {
        Verdict::OverGoal
    } else {
        Verdict::Fail
    }
}

/// Measures `attempt` (which returns the figure and a line of detail) until it meets `goal` or
/// [`ATTEMPTS`] are spent, prints every attempt and the verdict, and returns whether it passed.
pub fn gate(label: &str, goal: f64, attempt: impl FnMut() -> Option<(f64, String)>) -> bool {
    gate_failing_over(label, goal, goal * FAIL_FACTOR, attempt)
}

/// [`gate`] with a limit of its own instead of twice the goal (an issue set both).
pub fn gate_failing_over(
    label: &str,
    goal: f64,
    limit: f64,
    mut attempt: impl FnMut() -> Option<(f64, String)>,
) -> bool {
    let mut best = f64::INFINITY;
    for n in 1..=ATTEMPTS {
        match attempt() {
            Some((figure, detail)) => {
                let again = if n > 1 {
                    format!(" (attempt {n})")
                } else {
                    String::new()
                };
                println!("{label:<44} {detail} | {figure:.2} (goal {goal}){again}");
                best = best.min(figure);
            }
            None => println!("{label:<44} attempt {n} measured nothing"),
        }
        if best <= goal {
            break;
        }
    }
    report_failing_over(label, best, goal, limit)
}

/// Prints the closing line of one figure: the best figure beside its goal, and the verdict.
pub fn report(label: &str, best: f64, goal: f64) -> bool {
    report_failing_over(label, best, goal, goal * FAIL_FACTOR)
}

/// [`report`] with a limit of its own instead of twice the goal.
pub fn report_failing_over(label: &str, best: f64, goal: f64, limit: f64) -> bool {
    let verdict = match verdict(best, goal) {
        Verdict::Fail if best <= limit => Verdict::OverGoal,
        Verdict::OverGoal if best > limit => Verdict::Fail,
        v => v,
    };
    match verdict {
        Verdict::MeetsGoal => {
            println!("  ok: {label}: {best:.2}, goal {goal}");
            true
        }
        Verdict::OverGoal => {
            println!(
                "  over the goal: {label}: {best:.2}, goal {goal} (fails over {limit:.2}: not failed)"
            );
            true
        }
        Verdict::Fail => {
            println!("  FAIL: {label}: {best:.2}, over {limit:.2} (the goal is {goal})");
            false
        }
    }
}
