//! Open MPI's `ob1` PML over the MX BTL (`library.mpi_path = "btl"`): how
//! an MPI message to another host becomes MX messages.
//!
//! Open MPI 1.2.6 and 1.3.0 take this path by default over MX:
//! `mca_pml_cm_component_init` (`ompi/mca/pml/cm/pml_cm_component.c`)
//! answers priority 1 unless the MTL it found is PSM ("if mtl is not PSM
//! then back down priority, and require the user to specify pml cm
//! directly"), against `ob1`'s 20 (`pml_ob1_component.c`, `"priority",
//! 20`), and `mca_pml_base_select` keeps the highest.
//!
//! * **Eager** (`mca_pml_ob1_send_request_start_btl`, `pml_ob1_sendreq.h`):
//!   a message of at most `btl_eager_limit - sizeof(mca_pml_ob1_hdr_t)`
//!   bytes is one MX message, its match header (16 bytes) and the data
//!   (`mca_btl_mx_prepare_src` + `mca_btl_mx_send`: one `mx_isend` of both
//!   segments).
//! * **Rendezvous** (contiguous data): the MX BTL has no memory pool
//!   (`btl_mx.c`: `NULL, /* mpool */`), so `mca_pml_ob1_rdma_btls` takes it
//!   with no registration (1.3.0: `pml_ob1_dummy_reg`) and the send starts
//!   `mca_pml_ob1_send_request_start_rdma`. Without `MCA_BTL_FLAGS_GET` it
//!   sends a RNDV header alone ("dont eager send any data / receiver will
//!   schedule rdma put(s) of the entire message"). The receiver, once it has
//!   matched it, posts one `mx_irecv` for the whole message
//!   (`mca_btl_mx_prepare_dst`; no `btl_rdma_pipeline_frag_size` cut: the
//!   registration is not NULL, `mca_pml_ob1_recv_request_schedule_once`)
//!   and sends a PUT header naming it; the sender's `mca_btl_mx_put` is one
//!   `mx_isend` of the whole message to that match key, and its completion
//!   (`mca_pml_ob1_put_completion`) sends a FIN header. The receive
//!   completes at the FIN. `btl_max_send_size` and
//!   `btl_rdma_pipeline_send_length` apply only to the copy-in/out and
//!   pipelined protocols, which a contiguous buffer over the MX BTL never
//!   takes.
//!
//! Each control header is an MX message of its own, sent like any other
//! (`Ob1Op::Ctl`). Their sizes are the x86-64 layouts of `pml_ob1_hdr.h`
//! (1.3.0; no heterogeneous padding). This file owns the stages of an MPI
//! request on this path and the operations it queues; matching, sending and
//! pulling are the library's as for any MX message. Intra-host messages
//! keep Open-MX's shared-memory path (`Kind::Shm`).

pub(crate) use super::ob1_ops::{Ob1Op, Stage};
use super::process::{Proc, Queued};
use super::Cx;
use crate::config::MpiPath;
use crate::costs::Costs;
use crate::workload::Op;

/// Match-key bits of ob1's headers and of a rendezvous' data, above every
/// program's tags (`crate::workload::tag`). A RNDV header carries the MPI
/// tag with [`RNDV`] set, so that it matches the MPI receive; the PUT, the
/// data and the FIN match receives the library posts itself.
pub(crate) const RNDV: u64 = 1 << 62;
pub(crate) const PUT: u64 = 1 << 61;
pub(crate) const DATA: u64 = 1 << 60;
pub(crate) const FIN: u64 = 1 << 59;

/// `mca_pml_ob1_match_hdr_t`: common 2 + ctx 2 + src 4 + tag 4 + seq 2,
/// padded to 16 \[fact, `pml_ob1_hdr.h`]: what 1.2.6 sends before eager
/// data (`sizeof(mca_pml_ob1_match_hdr_t)`, `pml_ob1_sendreq.c`). 1.3.0
/// sends `OMPI_PML_OB1_MATCH_HDR_LEN`, 14 without heterogeneous support;
/// nicsim takes 16 for both (two bytes move a message across an Open-MX
/// class boundary only at 17-18 B and 113-114 B of data).
pub(crate) const MATCH_HDR: u64 = 16;
/// `mca_pml_ob1_rendezvous_hdr_t`: match 16 + `hdr_msg_length` 8 +
/// `hdr_src_req` 8 \[fact].
pub(crate) const RNDV_HDR: u64 = 32;
/// `mca_pml_ob1_rdma_hdr_t` with one `mca_btl_base_segment_t` (address 8,
/// length 4 + padding 4, key 8): common 2 + padding 2 + `hdr_seg_cnt` 4 +
/// `hdr_req` 8 + `hdr_des` 8 + `hdr_rdma_offset` 8 + 24 = 56 \[fact].
pub(crate) const PUT_HDR: u64 = 56;
/// `mca_pml_ob1_fin_hdr_t` (1.3.0): common 2 + padding 6 + `hdr_des` 8 +
/// `hdr_fail` 4, padded to 24 \[fact].
pub(crate) const FIN_HDR: u64 = 24;
/// `sizeof(mca_pml_ob1_hdr_t)`, the union's largest member,
/// `mca_pml_ob1_rget_hdr_t`: RNDV 32 + `hdr_seg_cnt` 4 + padding 4 +
/// `hdr_des` 8 + one segment 24 = 72 \[fact]; the eager limit's data is
/// `btl_eager_limit` less this (`mca_pml_ob1_send_request_start_btl`).
pub(crate) const HDR_MAX: u64 = 72;

/// The most data an eager message carries, or `None` on the MTL path.
#[inline(always)]
pub(crate) fn eager_data(c: &Costs) -> Option<u64> {
    match c.mpi_path {
        MpiPath::Mtl => None,
        MpiPath::Btl => Some((c.lib.btl_eager_limit as u64).saturating_sub(HDR_MAX)),
    }
}

impl Proc {
    /// A program's send to rank `peer` on another host, on the BTL path
    /// with `eager` bytes of eager data: the send to run (the eager
    /// message, its match header added), or `None` when it became a
    /// rendezvous (its RNDV queued, the PUT's receive posted).
    pub(super) fn ob1_send(&mut self, cx: &mut Cx<'_>, peer: u32, size: u64, tag: u64, eager: u64) -> Option<Op> {
        if size <= eager {
            return Some(Op::Send { peer, size: size + MATCH_HDR, tag });
        }
        let peer = peer as u16;
        let req = self.new_req(true, size);
        self.set_stage(req, Stage::SendPut { peer, tag });
        self.post_recv(cx, Some(peer), PUT | tag, req);
        self.ob1_ops.push_back(Ob1Op::Ctl { peer, size: RNDV_HDR, tag: RNDV | tag });
        None
    }

    /// Receive `req` matched a RNDV header from `peer` with `tag`: it posts
    /// the data's receive and sends the PUT.
    pub(super) fn ob1_matched(&mut self, cx: &mut Cx<'_>, req: u32, peer: u16, tag: u64) {
        let tag = tag & !RNDV;
        self.set_stage(req, Stage::RecvData { peer, tag });
        self.post_recv(cx, Some(peer), DATA | tag, req);
        self.ob1_ops.push_back(Ob1Op::Ctl { peer, size: PUT_HDR, tag: PUT | tag });
    }

    /// Applies an ob1 send (priced in `step`).
    pub(super) fn ob1_apply(&mut self, cx: &mut Cx<'_>, op: Ob1Op) {
        match op {
            Ob1Op::Ctl { peer, size, tag } => {
                let req = self.new_req(true, size);
                self.reqs[req as usize].ob1 = true;
                self.post_send(cx, Queued { req, peer, size, tag });
            }
            Ob1Op::Data { peer, size, tag, req } => self.post_send(cx, Queued { req, peer, size, tag }),
        }
    }

    /// The stage of request `req` (`Stage::None` for one never staged).
    #[inline(always)]
    pub(super) fn stage(&self, req: u32) -> Stage {
        self.ob1_stage.get(req as usize).copied().unwrap_or_default()
    }

    fn set_stage(&mut self, req: u32, s: Stage) {
        let i = req as usize;
        if self.ob1_stage.len() <= i {
            self.ob1_stage.resize(i + 1, Stage::None);
        }
        self.ob1_stage[i] = s;
    }

    /// What request `req` at stage `s` completing means: its next stage,
    /// or (at a FIN, or the send's data) the MPI request's completion.
    #[cold]
    pub(super) fn ob1_advance(&mut self, cx: &mut Cx<'_>, req: u32, s: Stage) {
        match s {
            Stage::None => self.finish(cx, req),
            Stage::SendPut { peer, tag } => {
                self.set_stage(req, Stage::SendData { peer, tag });
                let size = self.reqs[req as usize].size;
                self.ob1_ops.push_back(Ob1Op::Data { peer, size, tag: DATA | tag, req });
            }
            Stage::SendData { peer, tag } => {
                self.set_stage(req, Stage::None);
                self.ob1_ops.push_back(Ob1Op::Ctl { peer, size: FIN_HDR, tag: FIN | tag });
                self.finish(cx, req);
            }
            Stage::RecvData { peer, tag } => {
                self.set_stage(req, Stage::RecvFin);
                self.post_recv(cx, Some(peer), FIN | tag, req);
            }
            Stage::RecvFin => {
                self.set_stage(req, Stage::None);
                self.finish(cx, req);
            }
        }
    }
}
