//! `cargo bench`: engine events/s and full-path ping-pong / stream rates.
//! Targets (SPEC 6): >= 10 M events/s on the engine; 1 M ping-pong round
//! trips through the full path in < 1 s.

fn main() {
    for (kind, n) in [("engine", 20_000_000u64), ("pingpong", 200_000), ("stream", 200_000)] {
        match nicsim::bench::run(kind, n) {
            Ok(m) => {
                let line: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v:.4e}")).collect();
                println!("{kind}: {}", line.join(" "));
            }
            Err(e) => eprintln!("{kind}: {e}"),
        }
    }
}
