//! The operations and request stages of Open MPI's `ob1` PML over the MX
//! BTL (`ob1.rs`, which drives them): the types a process holds.

use crate::workload::Op;

/// What an MPI request on the rendezvous waits for next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Not on the rendezvous: it completes as any request.
    #[default]
    None,
    /// A send whose RNDV went: the receiver's PUT (its receive is this
    /// request's).
    SendPut { peer: u16, tag: u64 },
    /// A send whose data went: the data's completion sends the FIN and
    /// completes it.
    SendData { peer: u16, tag: u64 },
    /// A receive whose PUT went: the data (its receive is this request's).
    RecvData { peer: u16, tag: u64 },
    /// A receive whose data came: it completes at the FIN.
    RecvFin,
}

/// A send of the ob1 layer the library makes before the program's next
/// operation, priced as a program's send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ob1Op {
    /// A header (RNDV, PUT or FIN) to rank `peer`: a send of its own.
    Ctl { peer: u16, size: u64, tag: u64 },
    /// The rendezvous' data (`mca_btl_mx_put`: one `mx_isend`) of send
    /// request `req`.
    Data { peer: u16, size: u64, tag: u64, req: u32 },
}

impl Ob1Op {
    /// The send it is, as the library prices one.
    pub(crate) fn as_send(self) -> Op {
        match self {
            Ob1Op::Ctl { peer, size, tag } | Ob1Op::Data { peer, size, tag, .. } => {
                Op::Send { peer: peer as u32, size, tag }
            }
        }
    }
}
