//! A download's progress on stderr, hand-rolled: a bar when the size is known, the bytes so far
//! when it is not; redrawn at most every 100 ms, on one line (`\r`), ended with a newline. Only
//! when stderr is a terminal: in a pipe or a log, nothing.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

const REDRAW_EVERY: Duration = Duration::from_millis(100);
const BAR_WIDTH: usize = 24;

/// Wraps a reader; draws as it is read.
pub struct Progress<R> {
    inner: R,
    label: String,
    total: Option<u64>,
    done: u64,
    drawn: Option<Instant>,
    shown: bool,
}

impl<R: Read> Progress<R> {
    /// Shows progress when `show` (callers pass whether stderr is a terminal).
    pub fn new(inner: R, label: &str, total: Option<u64>, show: bool) -> Progress<R> {
        Progress {
            inner,
            label: label.to_string(),
            total: total.filter(|t| *t > 0),
            done: 0,
            drawn: None,
            shown: show,
        }
    }

    fn draw(&mut self, last: bool) {
        if !self.shown {
            return;
        }
        let due = self.drawn.is_none_or(|at| at.elapsed() >= REDRAW_EVERY);
        if !(due || last) {
            return;
        }
        self.drawn = Some(Instant::now());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{}", line(&self.label, self.done, self.total));
        if last {
            let _ = writeln!(err);
        }
        let _ = err.flush();
    }

    /// Ends the line (the reader reached its end, or the caller is done with it).
    pub fn finish(mut self) {
        self.draw(true);
        self.shown = false;
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        self.draw(false);
        Ok(n)
    }
}

/// `label [#########---------------]  1.2/4.5 MiB  27%`, or `label  1.2 MiB` without a total.
pub fn line(label: &str, done: u64, total: Option<u64>) -> String {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    match total {
        Some(total) => {
            let fraction = (done as f64 / total as f64).clamp(0.0, 1.0);
            let filled = (fraction * BAR_WIDTH as f64).round() as usize;
            format!(
                "{label} [{}{}] {:>5.1}/{:.1} MiB {:>3.0}%",
                "#".repeat(filled),
                "-".repeat(BAR_WIDTH - filled),
                mib(done),
                mib(total),
                fraction * 100.0
            )
        }
        None => format!("{label} {:.1} MiB", mib(done)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let mib = 1024 * 1024;
        for (done, total, want) in [
            (
                0,
                Some(4 * mib),
                "get x.tar.gz [------------------------]   0.0/4.0 MiB   0%",
            ),
            (
                mib,
                Some(4 * mib),
                "get x.tar.gz [######------------------]   1.0/4.0 MiB  25%",
            ),
            (
                4 * mib,
                Some(4 * mib),
                "get x.tar.gz [########################]   4.0/4.0 MiB 100%",
            ),
            (3 * mib / 2, None, "get x.tar.gz 1.5 MiB"),
        ] {
            assert_eq!(line("get x.tar.gz", done, total), want);
        }
    }

    #[test]
    fn reads_through_whether_shown_or_not() {
        let data = vec![7u8; 300_000];
        let mut out = Vec::new();
        let mut reader = Progress::new(&data[..], "x", Some(300_000), false);
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        reader.finish();
    }
}
