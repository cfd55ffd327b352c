//! What a check found: fine, worth knowing, or a problem with its fix. `doctor` and `status`
//! report them; each host's own checks ([`crate::hosts`]) make them.

#[derive(Debug, Clone)]
pub struct Finding {
    pub problem: bool,
    pub message: String,
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(message: String) -> Finding {
        Finding {
            problem: false,
            message,
            fix: None,
        }
    }

    /// Worth knowing, not wrong: no exit 1, and `doctor --fix` leaves it.
    pub fn note(message: String, advice: String) -> Finding {
        Finding {
            problem: false,
            message,
            fix: Some(advice),
        }
    }

    pub fn problem(message: String, fix: String) -> Finding {
        Finding {
            problem: true,
            message,
            fix: Some(fix),
        }
    }
}
