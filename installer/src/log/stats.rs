//! `amplihack log --stats`: per plugin and handler over a window, the runs, the p50/p95/max
//! duration, failures, timeouts and denials, slowest first, with a histogram of durations; and
//! what amplihack itself added around the handlers.

use amplihack_state::audit::{Kind, Record};
use serde_json::{Value, json};

use super::filter::shown_decision;
use super::render::{Style, duration};

/// Upper bounds (ms) of the histogram's buckets; the last one is open.
const BUCKETS_MS: [f64; 8] = [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0];
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One plugin's handler (or one built-in).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub plugin: String,
    /// The handler's command; empty for a built-in.
    pub handler: String,
    pub runs: usize,
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
    pub failures: usize,
    pub timeouts: usize,
    pub denials: usize,
    /// Runs per duration bucket ([`BUCKETS_MS`], then the rest).
    pub histogram: [usize; 9],
}

impl Row {
    /// Whether any run has a duration (a detached run's is not known).
    fn timed(&self) -> bool {
        self.histogram.iter().any(|&n| n > 0)
    }
}

/// amplihack's own time per call that ran handlers.
#[derive(Debug, Clone, PartialEq)]
pub struct Overhead {
    pub calls: usize,
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub rows: Vec<Row>,
    pub overhead: Option<Overhead>,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn bucket(ms: f64) -> usize {
    BUCKETS_MS
        .iter()
        .position(|&bound| ms < bound)
        .unwrap_or(BUCKETS_MS.len())
}

pub fn compute(records: &[Record]) -> Stats {
    // (plugin, handler) -> records, in first-seen order.
    let mut groups: Vec<((String, String), Vec<&Record>)> = Vec::new();
    for record in records {
        let key = (
            record.plugin.clone(),
            if record.kind == Kind::Builtin {
                String::new()
            } else {
                record.command.clone().unwrap_or_default()
            },
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(record),
            None => groups.push((key, vec![record])),
        }
    }
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|((plugin, handler), members)| {
            let mut durations: Vec<f64> = members.iter().filter_map(|r| r.duration_ms).collect();
            durations.sort_by(f64::total_cmp);
            let mut histogram = [0; 9];
            for &ms in &durations {
                histogram[bucket(ms)] += 1;
            }
            Row {
                plugin,
                handler,
                runs: members.len(),
                p50: percentile(&durations, 50.0),
                p95: percentile(&durations, 95.0),
                max: durations.last().copied().unwrap_or(0.0),
                failures: members.iter().filter(|r| r.failed()).count(),
                timeouts: members.iter().filter(|r| r.timed_out).count(),
                denials: members
                    .iter()
                    .filter(|r| matches!(shown_decision(r), Some("deny" | "block")))
                    .count(),
                histogram,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.p95
            .total_cmp(&a.p95)
            .then(b.max.total_cmp(&a.max))
            .then(a.plugin.cmp(&b.plugin))
    });
    let mut overheads: Vec<f64> = records.iter().filter_map(|r| r.overhead_ms).collect();
    overheads.sort_by(f64::total_cmp);
    let overhead = (!overheads.is_empty()).then(|| Overhead {
        calls: overheads.len(),
        p50: percentile(&overheads, 50.0),
        p95: percentile(&overheads, 95.0),
        max: overheads.last().copied().unwrap_or(0.0),
    });
    Stats { rows, overhead }
}

/// The histogram as bars scaled to its fullest bucket, `·` for an empty one.
pub fn sparkline(histogram: &[usize; 9]) -> String {
    let most = histogram.iter().copied().max().unwrap_or(0).max(1);
    histogram
        .iter()
        .map(|&n| {
            if n == 0 {
                '·'
            } else {
                BARS[((n * BARS.len()).div_ceil(most)).clamp(1, BARS.len()) - 1]
            }
        })
        .collect()
}

/// The handler's command, cut to fit a column.
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(max - 1).collect();
        cut.push('…');
        cut
    }
}

/// The report for a person. `window` says what the records cover.
pub fn text(stats: &Stats, window: &str, style: Style) -> String {
    if stats.rows.is_empty() {
        return format!("no hook runs recorded {window}\n");
    }
    let headers = [
        "PLUGIN", "HANDLER", "RUNS", "P50", "P95", "MAX", "FAIL", "TIMEOUT", "DENY",
    ];
    let rows: Vec<[String; 9]> = stats
        .rows
        .iter()
        .map(|r| {
            [
                r.plugin.clone(),
                if r.handler.is_empty() {
                    "(built-in)".into()
                } else {
                    short(&r.handler, 40)
                },
                r.runs.to_string(),
                timed(r, r.p50),
                timed(r, r.p95),
                timed(r, r.max),
                r.failures.to_string(),
                r.timeouts.to_string(),
                r.denials.to_string(),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Text columns to the left, numbers to the right.
    let cell = |i: usize, text: &str| {
        let w = widths[i];
        if i < 2 {
            format!("{text:<w$}")
        } else {
            format!("{text:>w$}")
        }
    };
    let mut out = format!("hook runs {window}, slowest first (p95)\n\n");
    let head: Vec<String> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| cell(i, h))
        .collect();
    out.push_str(&style_bold(
        style,
        &format!("{}  DURATIONS <1ms … >3s", head.join("  ")),
    ));
    out.push('\n');
    for (row, stat) in rows.iter().zip(&stats.rows) {
        let cells: Vec<String> = row.iter().enumerate().map(|(i, c)| cell(i, c)).collect();
        out.push_str(&format!(
            "{}  {}\n",
            cells.join("  "),
            sparkline(&stat.histogram)
        ));
    }
    out.push('\n');
    match &stats.overhead {
        Some(o) => out.push_str(&format!(
            "amplihack itself, around the handlers: {} calls, p50 {}, p95 {}, max {}\n",
            o.calls,
            duration(o.p50),
            duration(o.p95),
            duration(o.max)
        )),
        None => {
            out.push_str("amplihack itself, around the handlers: not recorded in this window\n")
        }
    }
    out
}

/// A duration, or `-` for a row without any.
fn timed(row: &Row, ms: f64) -> String {
    if row.timed() {
        duration(ms)
    } else {
        "-".into()
    }
}

fn style_bold(style: Style, text: &str) -> String {
    if style.colour {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub fn json(stats: &Stats, since: Option<f64>) -> Value {
    json!({
        "since": since,
        "rows": stats.rows.iter().map(|r| json!({
            "plugin": r.plugin,
            "handler": if r.handler.is_empty() { Value::Null } else { json!(r.handler) },
            "runs": r.runs,
            "p50_ms": r.timed().then_some(r.p50),
            "p95_ms": r.timed().then_some(r.p95),
            "max_ms": r.timed().then_some(r.max),
            "failures": r.failures,
            "timeouts": r.timeouts,
            "denials": r.denials,
            "histogram": {
                "bounds_ms": BUCKETS_MS,
                "counts": r.histogram,
            },
        })).collect::<Vec<_>>(),
        "overhead": stats.overhead.as_ref().map(|o| json!({
            "calls": o.calls, "p50_ms": o.p50, "p95_ms": o.p95, "max_ms": o.max,
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_buckets() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 50.0), 50.0);
        assert_eq!(percentile(&sorted, 95.0), 95.0);
        assert_eq!(percentile(&[7.0], 95.0), 7.0);
        assert_eq!(percentile(&[], 95.0), 0.0);
        for (ms, want) in [
            (0.2, 0),
            (1.0, 1),
            (29.9, 3),
            (30.0, 4),
            (2999.0, 7),
            (10_000.0, 8),
        ] {
            assert_eq!(bucket(ms), want, "{ms}");
        }
        assert_eq!(sparkline(&[0, 1, 0, 8, 0, 0, 0, 0, 4]), "·▁·█····▄");
    }
}
