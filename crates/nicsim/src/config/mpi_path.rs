//! Which of Open MPI's two MX paths carries an MPI message
//! (`library.mpi_path`): a setting of the library, read by
//! `crate::library` (`ob1.rs`).

use serde::{Deserialize, Serialize};

/// The MPI layer's path to the MX API (`library.mpi_path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum MpiPath {
    /// `mtl` (the default): the `cm` PML with the MX MTL hands each MPI
    /// message to `mx_isend`/`mx_irecv` whole: one MX message per MPI
    /// message.
    #[default]
    #[serde(rename = "mtl")]
    Mtl,
    /// `btl`: the `ob1` PML with the MX BTL, which Open MPI 1.2.6 and
    /// 1.3.0 select by default over MX (`mca_pml_cm_component_init` backs
    /// the `cm` PML's priority down to 1 unless the MTL is PSM; `ob1`'s
    /// is 20). An MPI message of at most `library.btl_eager_limit` bytes,
    /// header included, is one MX message (the 16-byte match header and
    /// the data); a larger one is ob1's RDMA rendezvous: an RNDV header,
    /// the receiver's PUT header once it has matched, the data as one MX
    /// message to the receive the PUT names, then a FIN header
    /// (`crate::library` `ob1.rs`).
    #[serde(rename = "btl")]
    Btl,
}

impl MpiPath {
    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            MpiPath::Mtl => "mtl",
            MpiPath::Btl => "btl",
        }
    }
}
