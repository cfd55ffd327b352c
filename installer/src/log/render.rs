//! `amplihack log`'s lines for a person: one per record, aligned columns, colour only on a
//! terminal.

use amplihack_state::audit::Record;

use super::filter::shown_decision;

/// Whether to colour (stdout is a terminal and `NO_COLOR` is unset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub colour: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.colour && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

const HEADERS: [&str; 8] = [
    "TIME (UTC)",
    "HOST",
    "SESSION",
    "EVENT",
    "PLUGIN",
    "DECISION",
    "TOOK",
    "EXIT",
];

/// The widths of the columns: at least the header's, else the widest cell.
#[derive(Debug, Clone)]
pub struct Widths([usize; 8]);

impl Widths {
    pub fn of(records: &[Record]) -> Widths {
        let mut widths = HEADERS.map(|h| h.chars().count());
        for record in records {
            for (w, cell) in widths.iter_mut().zip(cells(record)) {
                *w = (*w).max(cell.chars().count());
            }
        }
        Widths(widths)
    }
}

/// The header line.
pub fn header(widths: &Widths, style: Style) -> String {
    let text = join(HEADERS.map(str::to_string), widths);
    format!("{}\n", style.paint("1", text.trim_end()))
}

/// Every record, a header first; "no hook runs recorded" when there are none.
pub fn table(records: &[Record], style: Style) -> String {
    if records.is_empty() {
        return "no hook runs match\n".to_string();
    }
    let widths = Widths::of(records);
    let mut out = header(&widths, style);
    for record in records {
        out.push_str(&line(record, &widths, style));
    }
    out
}

/// One record's line.
pub fn line(record: &Record, widths: &Widths, style: Style) -> String {
    let decision = shown_decision(record).unwrap_or("");
    let failed = record.failed();
    // Padded first, then coloured, so the escapes do not count as width.
    let mut cells: Vec<String> = cells(record)
        .iter()
        .zip(widths.0)
        .map(|(cell, w)| format!("{cell:<w$}"))
        .collect();
    cells[0] = style.paint("2", &cells[0]);
    match decision {
        "deny" | "block" => cells[5] = style.paint("31;1", &cells[5]),
        "ask" => cells[5] = style.paint("33", &cells[5]),
        _ => {}
    }
    if failed {
        cells[7] = style.paint("31;1", &cells[7]);
    }
    let text = cells.join("  ");
    let detail = detail(record);
    let detail = if detail.is_empty() {
        detail
    } else if failed || matches!(decision, "deny" | "block") {
        style.paint("31", &detail)
    } else {
        detail
    };
    format!("{}\n", format!("{text}  {detail}").trim_end())
}

fn join(cells: [String; 8], widths: &Widths) -> String {
    cells
        .iter()
        .zip(widths.0)
        .map(|(cell, w)| format!("{cell:<w$}"))
        .collect::<Vec<_>>()
        .join("  ")
}

fn cells(record: &Record) -> [String; 8] {
    let time = record
        .unix_time()
        .map(|t| amplihack_state::time::utc(t.floor() as i64).replace('T', " "))
        .map(|t| t.trim_end_matches('Z').to_string())
        .unwrap_or_else(|| record.time.clone());
    let session: String = record
        .session
        .as_deref()
        .unwrap_or("-")
        .chars()
        .take(8)
        .collect();
    let exit = if record.detached {
        "async".to_string()
    } else if record.timed_out {
        "timeout".to_string()
    } else {
        match (record.exit, record.kind) {
            (Some(code), _) => code.to_string(),
            (None, amplihack_state::audit::Kind::Builtin) => "-".to_string(),
            (None, _) if record.duration_ms.is_some() => "failed".to_string(),
            (None, _) => "-".to_string(),
        }
    };
    [
        time,
        record.host.clone().unwrap_or_else(|| "-".into()),
        session,
        record.event.clone(),
        record.plugin.clone(),
        shown_decision(record).unwrap_or("-").to_string(),
        record
            .duration_ms
            .map(duration)
            .unwrap_or_else(|| "-".into()),
        exit,
    ]
}

/// What follows the columns: a deny's or ask's reason, a failure's stderr line.
fn detail(record: &Record) -> String {
    let mut parts: Vec<String> = Vec::new();
    if matches!(shown_decision(record), Some("deny" | "block" | "ask"))
        && let Some(reason) = &record.reason
    {
        parts.push(reason.clone());
    }
    if record.failed() {
        match &record.stderr {
            Some(line) => parts.push(format!("stderr: {line}")),
            None if record.timed_out => parts.push("timed out".into()),
            None => {}
        }
    }
    if record.output_cut {
        parts.push("(output cut)".into());
    }
    // A reason and a stderr line come from plugins and models: written out, never acting on the
    // terminal (`log` and `log --follow` alike).
    amplihack_protocol::printable::printable(&parts.join("; ")).into_owned()
}

/// `0.4ms`, `12ms`, `1.25s`.
pub fn duration(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{:.2}s", ms / 1000.0)
    }
}
