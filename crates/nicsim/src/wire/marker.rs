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
use serde::Deserialize;

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

/// A marker class by its scenario name (`protocol.unmarked`): one field of
/// [`MarkedClasses`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerClass {
    /// `tiny_small`: TINY and SMALL frames.
    TinySmall,
    /// `medium_last`: the last MEDIUM fragment of each message.
    MediumLast,
    /// `rndv`: RNDV frames.
    Rndv,
    /// `pull`: PULL requests.
    Pull,
    /// `last_pull_reply`: the last PULL_REPLY of each block.
    LastPullReply,
    /// `notify`: NOTIFY frames.
    Notify,
}

impl MarkedClasses {
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

    /// `self` with `class` unmarked.
    pub fn with_unmarked(mut self, class: MarkerClass) -> Self {
        *self.field_mut(class) = false;
        self
    }

    /// Whether `class` is marked.
    pub fn get(&self, class: MarkerClass) -> bool {
        let mut copy = *self;
        *copy.field_mut(class)
    }

    fn field_mut(&mut self, class: MarkerClass) -> &mut bool {
        match class {
            MarkerClass::TinySmall => &mut self.tiny_small,
            MarkerClass::MediumLast => &mut self.medium_last,
            MarkerClass::Rndv => &mut self.rndv,
            MarkerClass::Pull => &mut self.pull,
            MarkerClass::LastPullReply => &mut self.last_pull_reply,
            MarkerClass::Notify => &mut self.notify,
        }
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
        let covers: [(MarkerClass, &[PacketKind]); 6] = [
            (MarkerClass::TinySmall, &[PacketKind::Tiny, PacketKind::Small]),
            (MarkerClass::MediumLast, &[PacketKind::Medium]),
            (MarkerClass::Rndv, &[PacketKind::Rndv]),
            (MarkerClass::Pull, &[PacketKind::Pull]),
            (MarkerClass::LastPullReply, &[PacketKind::PullReply]),
            (MarkerClass::Notify, &[PacketKind::Notify]),
        ];
        let mut all = MarkedClasses::default();
        for (class, kinds) in covers {
            let m = MarkedClasses::default().with_unmarked(class);
            assert!(!m.get(class));
            for k in PacketKind::ALL {
                let want = k != PacketKind::Ack && !kinds.contains(&k);
                assert_eq!(m.marks(k, true), want, "unmarked {class:?}, kind {k}");
            }
            all = all.with_unmarked(class);
        }
        assert_eq!(all, MarkedClasses::none());
    }

    #[test]
    fn class_names_are_the_field_names() {
        let names = ["tiny_small", "medium_last", "rndv", "pull", "last_pull_reply", "notify"];
        for name in names {
            let class: MarkerClass = toml::Value::String(name.into()).try_into().unwrap();
            assert!(!MarkedClasses::default().with_unmarked(class).get(class), "{name}");
        }
        assert!(toml::Value::String("medium".into()).try_into::<MarkerClass>().is_err());
    }
}
