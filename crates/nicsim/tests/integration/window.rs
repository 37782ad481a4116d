//! Every new message waits for its peer's send window
//! (`library.send_window_frames`): program sends, sends resubmitted from the
//! region queue and the notifies of completed pulls alike. The core checks
//! it at the end of every run (an `invariant:` error names a rank that sent
//! beyond a full window), so the property draws check every path; the run
//! here takes the one that bypassed it most (a notify sent without looking
//! at the window fails it).

use super::run;

/// A window of one frame: at most one message unacknowledged per peer (a
/// message alone always goes).
const ONE_FRAME: &str = "[platform.library]\nsend_window_frames = 1\n";

/// All-to-all of large messages between 8 ranks: each pull's notify goes to
/// a peer this rank is also sending to, so its window is often full when the
/// pull completes; the notify waits for the ack.
#[test]
fn notifies_wait_for_the_window() {
    for preset in ["omx2009", "omx2009-mq"] {
        let m = run(&format!(
            "preset = \"{preset}\"\n{ONE_FRAME}[platform.topology]\nhosts = 4\n\
             [workload]\nkind = \"alltoall\"\nsize_bytes = 70000\niterations = 2\nprocs_per_host = 2\n"
        ));
        assert!(m.get("frames").unwrap() > 0.0);
    }
}
