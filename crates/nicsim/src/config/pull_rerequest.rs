//! How a pull re-requests an incomplete block (`library.pull_rerequest`):
//! a setting of the library, read by `crate::proto::pull`.

use serde::{Deserialize, Serialize};

/// What a re-request of an incomplete block asks for
/// (`library.pull_rerequest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum PullRerequest {
    /// `missing-tail` (the default): from the block's first missing reply
    /// to its end (`crate::proto::PullHandle::missing_span`).
    #[default]
    #[serde(rename = "missing-tail")]
    MissingTail,
    /// `whole-block`: the whole block again, replies already received
    /// included, as Open-MX 1.0.901's driver does: both the timeout handler
    /// and the early re-request build the request from the block's
    /// descriptor as first filled (`omx_fill_pull_block_request(handle, i)`
    /// from `omx_progress_pull_on_handle_timeout_handle_locked` and
    /// `omx_progress_pull_on_recv_pull_reply_locked`, driver/linux
    /// `omx_pull.c`).
    #[serde(rename = "whole-block")]
    WholeBlock,
}

impl PullRerequest {
    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            PullRerequest::MissingTail => "missing-tail",
            PullRerequest::WholeBlock => "whole-block",
        }
    }
}
