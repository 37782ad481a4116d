//! Which frames carry the latency-sensitive marker ([OMX-COAL]).
//!
//! This file owns the sender-side marking rule: given a packet kind and
//! whether the frame ends its group (last MEDIUM fragment of a message, last
//! PULL_REPLY of a block), should the marker bit be set. Each class can be
//! switched off, which is how the marking study removes one at a time. It
//! does not own where the bit lives (`head.rs`: bit 0x80 of the type byte)
//! nor what the NIC does with it (`crate::nic::coalesce`).
//!
//! Source for the default set: SPEC §2.1, after [OMX-COAL]: tiny/small
//! messages, the last fragment of a medium message, RNDV, PULL requests, the
//! last PULL_REPLY of each block, NOTIFY. Explicit ACKs are never marked.

use super::PacketKind;

/// The marked classes; each `true` field marks its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkedClasses {
    /// TINY and SMALL frames.
    pub tiny_small: bool,
    /// The last MEDIUM fragment of each message.
    pub medium_last: bool,
    /// RNDV frames.
    pub rndv: bool,
    /// PULL requests.
    pub pull: bool,
    /// The last PULL_REPLY of each block.
    pub last_pull_reply: bool,
    /// NOTIFY frames.
    pub notify: bool,
}

impl Default for MarkedClasses {
    /// Every class marked, as in [OMX-COAL].
    fn default() -> Self {
        MarkedClasses {
            tiny_small: true,
            medium_last: true,
            rndv: true,
            pull: true,
            last_pull_reply: true,
            notify: true,
        }
    }
}

impl MarkedClasses {
    /// Class names accepted by [`with_unmarked`](Self::with_unmarked), in
    /// field order.
    pub const NAMES: [&'static str; 6] = ["tiny_small", "medium_last", "rndv", "pull", "last_pull_reply", "notify"];

    /// No class marked (the marker is never set).
    pub fn none() -> Self {
        MarkedClasses {
            tiny_small: false,
            medium_last: false,
            rndv: false,
            pull: false,
            last_pull_reply: false,
            notify: false,
        }
    }

    /// `self` with the class called `name` unmarked; the error names the bad
    /// value and the allowed names.
    pub fn with_unmarked(mut self, name: &str) -> Result<Self, String> {
        *self
            .field_mut(name)
            .ok_or_else(|| format!("unknown marked class {name:?}; expected one of: {}", Self::NAMES.join(", ")))? =
            false;
        Ok(self)
    }

    /// Whether the class called `name` is marked (`None` for unknown names).
    pub fn get(&self, name: &str) -> Option<bool> {
        let mut copy = *self;
        copy.field_mut(name).map(|f| *f)
    }

    fn field_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "tiny_small" => &mut self.tiny_small,
            "medium_last" => &mut self.medium_last,
            "rndv" => &mut self.rndv,
            "pull" => &mut self.pull,
            "last_pull_reply" => &mut self.last_pull_reply,
            "notify" => &mut self.notify,
            _ => return None,
        })
    }

    /// Whether a frame of `kind` is marked. `last_in_group` matters only for
    /// MEDIUM (last fragment of the message) and PULL_REPLY (last reply of
    /// the block). ACK frames are never marked.
    pub fn marks(&self, kind: PacketKind, last_in_group: bool) -> bool {
        match kind {
            PacketKind::Tiny | PacketKind::Small => self.tiny_small,
            PacketKind::Medium => self.medium_last && last_in_group,
            PacketKind::Rndv => self.rndv,
            PacketKind::Pull => self.pull,
            PacketKind::PullReply => self.last_pull_reply && last_in_group,
            PacketKind::Notify => self.notify,
            PacketKind::Ack => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_marks_per_spec() {
        let m = MarkedClasses::default();
        for last in [false, true] {
            assert!(m.marks(PacketKind::Tiny, last));
            assert!(m.marks(PacketKind::Small, last));
            assert!(m.marks(PacketKind::Rndv, last));
            assert!(m.marks(PacketKind::Pull, last));
            assert!(m.marks(PacketKind::Notify, last));
            assert!(!m.marks(PacketKind::Ack, last));
        }
        assert!(!m.marks(PacketKind::Medium, false));
        assert!(m.marks(PacketKind::Medium, true));
        assert!(!m.marks(PacketKind::PullReply, false));
        assert!(m.marks(PacketKind::PullReply, true));
    }

    #[test]
    fn none_marks_nothing() {
        let m = MarkedClasses::none();
        for k in PacketKind::ALL {
            assert!(!m.marks(k, true), "{k}");
            assert!(!m.marks(k, false), "{k}");
        }
    }

    #[test]
    fn unmarking_each_class_turns_off_exactly_its_frames() {
        // (class, kinds it covers) for the frames that end their group.
        let covers: [(&str, &[PacketKind]); 6] = [
            ("tiny_small", &[PacketKind::Tiny, PacketKind::Small]),
            ("medium_last", &[PacketKind::Medium]),
            ("rndv", &[PacketKind::Rndv]),
            ("pull", &[PacketKind::Pull]),
            ("last_pull_reply", &[PacketKind::PullReply]),
            ("notify", &[PacketKind::Notify]),
        ];
        for (name, kinds) in covers {
            let m = MarkedClasses::default().with_unmarked(name).unwrap();
            assert_eq!(m.get(name), Some(false));
            for k in PacketKind::ALL {
                let want = k != PacketKind::Ack && !kinds.contains(&k);
                assert_eq!(m.marks(k, true), want, "unmarked {name}, kind {k}");
            }
        }
        let mut m = MarkedClasses::default();
        for name in MarkedClasses::NAMES {
            m = m.with_unmarked(name).unwrap();
        }
        assert_eq!(m, MarkedClasses::none());
    }

    #[test]
    fn unknown_class_is_an_error_listing_names() {
        let err = MarkedClasses::default().with_unmarked("medium").unwrap_err();
        assert_eq!(
            err,
            "unknown marked class \"medium\"; expected one of: tiny_small, medium_last, \
             rndv, pull, last_pull_reply, notify"
        );
        assert_eq!(MarkedClasses::default().get("bogus"), None);
    }
}
