//! Counts in words: thousands separated, and a share of lines.

/// "1,254 of 4,275 (29.3%)".
pub fn line_share(l: crate::record::Lines) -> String {
    let share = l.percent().map_or("-".to_string(), |p| format!("{p:.1}%"));
    format!("{} of {} ({share})", thousands(l.executed as u64), thousands(l.executable as u64))
}

/// "10,000": an integer with its thousands separated.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
